import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AddressInfo, createServer } from 'node:net';

/** Where Debian puts PostgreSQL 15's programs (`postgresql-15`); PG_BIN overrides. */
const BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/**
 * Whether this machine can run a primary and a streaming replica of its own: PostgreSQL 15's
 * programs are here and, as root (PostgreSQL refuses to run as root), a `postgres` OS user to run them.
 */
export function canRunReplica(): boolean {
  if (!existsSync(join(BIN, 'pg_basebackup'))) return false;
  if (process.getuid?.() !== 0) return true;
  try {
    execFileSync('id', ['-u', 'postgres'], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A PostgreSQL primary and its streaming replica (pg_basebackup -R: hot standby, asynchronous), each
 * a server of its own in a temporary folder on a free port of 127.0.0.1, trust authentication:
 * docs/contract.md §21's DATABASE_READ_URL against real replication, without touching the
 * machine's own server. PostgreSQL refuses to run as root: as root, the programs run as the
 * `postgres` OS user. About 3–5 s to start both (initdb, base backup), a few MB of disk.
 */
export class StreamingReplica {
  private constructor(
    private readonly dir: string,
    readonly primaryPort: number,
    readonly replicaPort: number,
  ) {}

  static async start(): Promise<StreamingReplica> {
    const dir = mkdtempSync(join(tmpdir(), 'audit-replica-'));
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
      chownSync(dir, uid, gid);
    }
    const replica = new StreamingReplica(dir, await freePort(), await freePort());
    replica.run('initdb', ['-D', replica.data('primary'), '-A', 'trust', '-U', 'postgres', '--no-sync']);
    replica.startServer('primary', replica.primaryPort);
    replica.run('pg_basebackup', [
      ...['-h', '127.0.0.1', '-p', String(replica.primaryPort), '-U', 'postgres'],
      ...['-D', replica.data('replica'), '-R', '-X', 'stream', '--no-sync'],
    ]);
    replica.startServer('replica', replica.replicaPort);
    return replica;
  }

  /** The URL of `database` on the primary or on the replica. */
  url(side: 'primary' | 'replica', database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${side === 'primary' ? this.primaryPort : this.replicaPort}/${database}`;
  }

  /** Stops the replica at once (a crash as its clients see it): the primary goes on. */
  stopReplica(): void {
    this.run('pg_ctl', ['-D', this.data('replica'), '-m', 'immediate', '-w', 'stop']);
  }

  stop(): void {
    for (const side of ['replica', 'primary'])
      try {
        this.run('pg_ctl', ['-D', this.data(side), '-m', 'immediate', '-w', 'stop']);
      } catch {
        // Not started, or already stopped.
      }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private data(side: string): string {
    return join(this.dir, side);
  }

  private startServer(side: string, port: number): void {
    const options = `-p ${port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`;
    this.run('pg_ctl', ['-D', this.data(side), '-o', options, '-l', join(this.dir, `${side}.log`), '-w', 'start']);
  }

  private run(program: string, args: string[]): void {
    const asRoot = process.getuid?.() === 0;
    const [file, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', join(BIN, program), ...args]]
      : [join(BIN, program), args];
    execFileSync(file, argv, { stdio: 'pipe', cwd: this.dir });
  }
}
