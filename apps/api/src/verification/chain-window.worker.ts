import { workerData } from 'node:worker_threads';
import { Client } from 'pg';
// The file itself, not the barrel: a worker needs its SQL, not Nest's modules.
import { clientRowStream, verificationWindowReads } from '@app/database/repositories/verification-window.queries';
import { inspectWindow, WindowReport, WindowRequest } from '@app/verification';
import { choosesHost, parseDatabaseUrl } from '@app/common/config/database-url';
import { CONNECTION_SETTINGS } from '@app/database/connection-settings';
import { connectFirstUsable } from '@app/database/host-choice';
import { replicaTrouble } from '@app/database/replica-trouble';

/**
 * A piscina worker of whole-chain verification: reads and hashes windows on its own PostgreSQL
 * connection, so that hashing runs on more than the one core of the service's event loop. It
 * answers with the window's report and the side that served it, or with the failure's message and
 * SQLSTATE (an Error does not cross threads with its code, and the code tells an unreachable
 * database from a bug).
 *
 * With DATABASE_READ_URL, a window whose request carries a `floor` (the primary's WAL position once
 * the walk knew the chain's head: ChainVerificationService) is read on the replica once it has
 * replayed that far, so that it holds every event up to the head; a replica still behind after
 * `maxLagMs`, or unreachable, leaves the window to the primary (docs/contract.md §21).
 */
export interface WindowWorkerData {
  url: string;
  readUrl: string | null;
  maxLagMs: number;
}

export type Side = 'primary' | 'replica';

/** A window and the floor it is read at on the replica (null: on the primary). */
export type FloorWindow = WindowRequest & { floor: string | null };

export type WindowOutcome =
  { report: WindowReport; side: Side } | { failure: { message: string; code: string | null } };

/** The connection is closed after this long without work, and opened again by the next window. */
const IDLE_MS = 10_000;
/** The waits between looks at a replica that is behind a window's floor, in ms (then the last, repeated). */
const CATCH_UP_WAITS_MS = [1, 2, 5, 10, 20, 50];

/** One connection of this worker to one database, opened on first use and again after a failure. */
class Connection {
  private client: Promise<Client> | null = null;
  private idle: NodeJS.Timeout | null = null;
  private readonly parsed;

  constructor(
    private readonly url: string,
    private readonly name: string,
  ) {
    this.parsed = parseDatabaseUrl(url);
  }

  get(): Promise<Client> {
    if (this.idle) clearTimeout(this.idle);
    if (this.client) return this.client;
    const opening = (async () => {
      const settings = { application_name: this.name, ...CONNECTION_SETTINGS };
      // A DATABASE_URL of several hosts (docs/contract.md §21): the one that gives the session asked for.
      const fresh = choosesHost(this.parsed)
        ? (await connectFirstUsable(this.parsed, settings)).client
        : new Client({ ...settings, connectionString: this.url });
      // A connection that breaks between windows is dropped here and opened again on the next one.
      fresh.on('error', () => this.drop(opening));
      if (!choosesHost(this.parsed)) await fresh.connect();
      return fresh;
    })();
    this.client = opening;
    return opening;
  }

  /** Closes `which` (by default the current connection); the next window opens a new one. */
  drop(which: Promise<Client> | null = this.client): void {
    if (which === null) return;
    if (this.client === which) this.client = null;
    void which.then((c) => c.end()).catch(() => undefined);
  }

  closeWhenIdle(): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = setTimeout(() => this.drop(), IDLE_MS);
    this.idle.unref();
  }
}

const { url, readUrl, maxLagMs } = workerData as WindowWorkerData;
const primary = new Connection(url, 'audit-trail-service-verify');
const replica = readUrl ? new Connection(readUrl, 'audit-trail-service-verify-reads') : null;
let running = 0;

/** Reads a window on `on`; on failure, closes the connection it used (only that one: others may be new). */
async function attempt(on: Connection, request: WindowRequest, floor: string | null): Promise<WindowReport | null> {
  const used = on.get();
  try {
    const db = await used;
    if (floor !== null && !(await caughtUp(db, floor))) return null;
    return await inspectWindow(verificationWindowReads(clientRowStream(db)), request);
  } catch (error) {
    on.drop(used);
    throw error;
  }
}

/** Whether the replica on `db` replays `floor` within maxLagMs (looked at again after short waits). */
async function caughtUp(db: Client, floor: string): Promise<boolean> {
  const deadline = Date.now() + maxLagMs;
  for (let look = 0; ; look++) {
    const { rows } = await db.query<{ ok: boolean }>(
      'SELECT COALESCE(pg_last_wal_replay_lsn(), pg_current_wal_lsn()) >= $1::pg_lsn AS ok',
      [floor],
    );
    if (rows[0]?.ok) return true;
    const wait = CATCH_UP_WAITS_MS[Math.min(look, CATCH_UP_WAITS_MS.length - 1)]!;
    if (Date.now() + wait > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

/** Windows are read-only, so one more try on a new connection is safe: it heals a connection closed since the last window. */
async function twice(read: () => Promise<WindowReport | null>): Promise<WindowReport | null> {
  try {
    return await read();
  } catch {
    return read();
  }
}

/** On the replica when the request has a floor and the replica reaches it; else (or when it fails) on the primary. */
async function served({ floor, ...window }: FloorWindow): Promise<{ report: WindowReport; side: Side }> {
  if (replica && floor !== null) {
    // Only a replica's own trouble (unreachable, a conflict with recovery) sends the window to the
    // primary: a window that fails for any other reason would fail there too, at twice the cost.
    const report = await twice(() => attempt(replica, window, floor)).catch((error: unknown) => {
      if (replicaTrouble(error)) return null;
      throw error;
    });
    if (report) return { report, side: 'replica' };
  }
  return { report: (await twice(() => attempt(primary, window, null)))!, side: 'primary' };
}

export default async function inspect(request: FloorWindow): Promise<WindowOutcome> {
  running++;
  try {
    return await served(request);
  } catch (error) {
    const { message, code } = error as { message?: unknown; code?: unknown };
    return { failure: { message: String(message ?? error), code: typeof code === 'string' ? code : null } };
  } finally {
    if (--running === 0) {
      primary.closeWhenIdle();
      replica?.closeWhenIdle();
    }
  }
}
