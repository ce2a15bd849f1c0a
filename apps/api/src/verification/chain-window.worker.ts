import { workerData } from 'node:worker_threads';
import { Client } from 'pg';
// The file itself, not the barrel: a worker needs its SQL, not Nest's modules.
import { clientRowStream, verificationWindowReads } from '@app/database/repositories/verification-window.queries';
import { inspectWindow, WindowReport, WindowRequest } from '@app/verification';
import { choosesHost, parseDatabaseUrl } from '@app/common/config/database-url';
import { connectFirstUsable } from '@app/database/host-choice';

/**
 * A piscina worker of whole-chain verification: reads and hashes windows on its own PostgreSQL
 * connection, so that hashing runs on more than the one core of the service's event loop. It
 * answers with the window's report, or with the failure's message and SQLSTATE (an Error does not
 * cross threads with its code, and the code tells an unreachable database from a bug).
 */
export interface WindowWorkerData {
  url: string;
}

export type WindowOutcome = { report: WindowReport } | { failure: { message: string; code: string | null } };

/** The connection is closed after this long without work, and opened again by the next window. */
const IDLE_MS = 10_000;

const { url } = workerData as WindowWorkerData;
const parsedUrl = parseDatabaseUrl(url);
let client: Promise<Client> | null = null;
let idle: NodeJS.Timeout | null = null;
let running = 0;

function connection(): Promise<Client> {
  if (client) return client;
  const opening = (async () => {
    const settings = { application_name: 'audit-trail-service-verify', connectionTimeoutMillis: 5000 };
    // A DATABASE_URL of several hosts (docs/contract.md §21): the one that gives the session asked for.
    const fresh = choosesHost(parsedUrl)
      ? (await connectFirstUsable(parsedUrl, settings)).client
      : new Client({ ...settings, connectionString: url });
    // A connection that breaks between windows is dropped here and opened again on the next one.
    fresh.on('error', () => drop(opening));
    if (!choosesHost(parsedUrl)) await fresh.connect();
    return fresh;
  })();
  client = opening;
  return opening;
}

/** Closes `which` (by default the current connection); the next window opens a new one. */
function drop(which: Promise<Client> | null = client): void {
  if (which === null) return;
  if (client === which) client = null;
  void which.then((c) => c.end()).catch(() => undefined);
}

function closeWhenIdle(): void {
  if (idle) clearTimeout(idle);
  idle = setTimeout(() => drop(), IDLE_MS);
  idle.unref();
}

/** Reads a window; on failure, closes the connection it used (only that one: others may be new). */
async function attempt(request: WindowRequest): Promise<WindowReport> {
  const used = connection();
  try {
    const db = await used;
    return await inspectWindow(verificationWindowReads(clientRowStream(db)), request);
  } catch (error) {
    drop(used);
    throw error;
  }
}

export default async function inspect(request: WindowRequest): Promise<WindowOutcome> {
  running++;
  if (idle) clearTimeout(idle);
  try {
    try {
      return { report: await attempt(request) };
    } catch {
      // Windows are read-only, so one more try on a new connection is safe: it heals a
      // connection the database closed since the last window (a restart, an idle timeout).
      return { report: await attempt(request) };
    }
  } catch (error) {
    const { message, code } = error as { message?: unknown; code?: unknown };
    return { failure: { message: String(message ?? error), code: typeof code === 'string' ? code : null } };
  } finally {
    if (--running === 0) closeWhenIdle();
  }
}
