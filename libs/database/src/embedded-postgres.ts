import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { InstanceLock } from './instance-lock';
import { restrictToOwner } from './owner-only';

/** `pg` finds a server's Unix socket as `<host directory>/.s.PGSQL.<port>`. */
const SOCKET_PORT = 5432;
const SOCKET_FILE = `.s.PGSQL.${SOCKET_PORT}`;
/** Longest Unix socket path every platform takes (sun_path is 108 bytes on Linux, 104 on macOS). */
const MAX_SOCKET_PATH_BYTES = 103;

/**
 * PGlite's own start parameters, and `wal_recycle=off`: a checkpoint then unlinks the WAL segments it
 * no longer needs instead of renaming them into future segments, whose old bytes (erased values
 * among them) would stay in DATA_DIR until overwritten (docs/contract.md §17, ErasureResidueRepository).
 * A new segment is created zero-filled (wal_init_zero, on by default).
 */
const START_PARAMS = [...PGlite.defaultStartParams, '-c', 'wal_recycle=off'];

export type EmbeddedWarning = (message: string) => void;

/**
 * PGlite (PostgreSQL compiled to WASM) on DATA_DIR, served so the ordinary `pg` driver and
 * TypeORM's postgres driver reach it: one dialect, one set of migrations.
 *
 * It is reachable by this service alone: PGlite has no authentication (whoever connects is
 * superuser and could disable the append-only triggers), so it listens on no TCP port, only on a
 * Unix socket in `DATA_DIR/socket`, a directory of mode 0700, and DATA_DIR and everything in it
 * are readable and writable by the owner only (PostgreSQL's own rule for its data directory).
 *
 * PGlite is a single session. pglite-socket can multiplex several connections, but it keeps a
 * transaction exclusive only once PGlite reports one open, so messages of two connections'
 * extended-protocol queries can interleave. We therefore accept exactly one connection and
 * the app uses a pool of one: every transaction then runs alone, which is what isolation needs.
 */
export class EmbeddedPostgres {
  private constructor(
    private readonly db: PGlite,
    private readonly server: PGLiteSocketServer,
    /** The directory of the socket: `pg`'s `host`. */
    readonly socketDir: string,
    /** A directory of our own under the system's temporary one, removed at stop (DATA_DIR too long). */
    private readonly temporarySocketDir: boolean,
    private readonly lock: InstanceLock,
  ) {}

  /** What `pg` connects to: the socket directory as the host (`?host=` wins over the URL's host). */
  get url(): string {
    return `postgres://postgres@localhost:${SOCKET_PORT}/postgres?host=${encodeURIComponent(this.socketDir)}`;
  }

  /**
   * Creates DATA_DIR (mode 0700) or tightens an existing one (with a warning naming what it
   * changed), refuses a DATA_DIR whose database another running instance serves (InstanceLock,
   * whatever the path's length), then opens PGlite and listens on the socket.
   */
  static async start(dataDir: string, warn: EmbeddedWarning): Promise<EmbeddedPostgres> {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const loosened = restrictToOwner(dataDir);
    if (loosened.length > 0)
      warn(
        `${dataDir} had ${loosened.length} entr${loosened.length === 1 ? 'y' : 'ies'} open to other users ` +
          `(${loosened.slice(0, 3).join(', ')}${loosened.length > 3 ? ', …' : ''}): removed their group and other permissions`,
      );
    const lock = InstanceLock.acquire(dataDir);
    try {
      return await EmbeddedPostgres.serve(dataDir, lock, warn);
    } catch (error) {
      lock.release();
      throw error;
    }
  }

  private static async serve(dataDir: string, lock: InstanceLock, warn: EmbeddedWarning): Promise<EmbeddedPostgres> {
    let socketDir = join(dataDir, 'socket');
    let temporarySocketDir = false;
    if (Buffer.byteLength(join(socketDir, SOCKET_FILE)) > MAX_SOCKET_PATH_BYTES) {
      // The kernel would truncate the path (Node does not refuse it): use a fresh 0700 directory instead.
      socketDir = mkdtempSync(join(tmpdir(), 'audit-trail-db-'));
      temporarySocketDir = true;
      warn(`${dataDir} is too long a path for a Unix socket: the embedded database listens in ${socketDir}`);
    } else {
      mkdirSync(socketDir, { mode: 0o700, recursive: true });
      // The lock is ours, so a socket file here is one a killed instance left.
      rmSync(join(socketDir, SOCKET_FILE), { force: true });
    }
    const db = await PGlite.create({ dataDir: join(dataDir, 'pglite'), startParams: START_PARAMS });
    const server = new PGLiteSocketServer({ db, path: join(socketDir, SOCKET_FILE), maxConnections: 1 });
    try {
      await server.start();
    } catch (error) {
      await db.close();
      if (temporarySocketDir) rmSync(socketDir, { recursive: true, force: true });
      throw error;
    }
    // Whatever the umask, PGlite writes a new database's files 0666, and rewrites its relation cache
    // files (pg_internal.init) 0644 at every start, a restart too; the files PostgreSQL creates later
    // are 0600. So tighten once more at every start, now that it has started.
    restrictToOwner(dataDir);
    if (temporarySocketDir) restrictToOwner(socketDir);
    return new EmbeddedPostgres(db, server, socketDir, temporarySocketDir, lock);
  }

  async stop(): Promise<void> {
    await this.server.stop();
    await this.db.close();
    if (this.temporarySocketDir) rmSync(this.socketDir, { recursive: true, force: true });
    this.lock.release();
  }
}
