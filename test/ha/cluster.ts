import { ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Where Debian puts PostgreSQL 15's programs (`postgresql-15`); PG_BIN overrides. */
const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
/** The programs the cluster runs (Debian: patroni, etcd-server, etcd-client, haproxy, postgresql-15). */
const PROGRAMS = ['patroni', 'patronictl', 'etcd', 'haproxy'];

/** One PostgreSQL node under Patroni. */
export interface HaNode {
  name: string;
  pgPort: number;
  restPort: number;
  dataDir: string;
  config: string;
}

/** What the cluster is missing to start on this machine, or null when it can. */
export function haMissing(): string | null {
  const missing = PROGRAMS.filter((program) => {
    try {
      execFileSync('sh', ['-c', `command -v ${program}`], { stdio: 'pipe' });
      return false;
    } catch {
      return true;
    }
  });
  if (!existsSync(join(PG_BIN, 'postgres'))) missing.push(`${PG_BIN}/postgres`);
  return missing.length === 0
    ? null
    : `missing: ${missing.join(', ')} (apt-get install patroni etcd-server etcd-client haproxy postgresql-15)`;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** The `postgres` OS user's ids when running as root (PostgreSQL refuses root), else none. */
function postgresUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString().trim());
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * The HA topology of docker/ha/ on this machine, for CI (Docker is slow here) and the bench: one
 * etcd member, three PostgreSQL 15 nodes under Patroni (each initialised by Patroni, in a temporary
 * folder, on free ports of 127.0.0.1; `synchronous_mode: true`, so a commit is acknowledged only
 * once a second node has it) and HAProxy with a read-write port (the leader, by Patroni's REST
 * `/primary`) and a read-only port (running replicas, `/replica`). Trust authentication on
 * 127.0.0.1 only. Patroni and PostgreSQL run as the `postgres` OS user when started as root.
 * About 10–20 s to start on a 2-core machine; stop() ends every process it started.
 */
export class HaCluster {
  private readonly children: ChildProcess[] = [];
  private stopped = false;

  private constructor(
    readonly dir: string,
    readonly scope: string,
    readonly nodes: HaNode[],
    readonly etcdPort: number,
    readonly rwPort: number,
    readonly roPort: number,
  ) {}

  static async start(options: { log?: (line: string) => void } = {}): Promise<HaCluster> {
    const missing = haMissing();
    if (missing) throw new Error(`the HA cluster cannot start: ${missing}`);
    const dir = mkdtempSync(join(tmpdir(), 'audit-ha-'));
    const user = postgresUser();
    if (user) chownSync(dir, user.uid, user.gid);
    const nodes: HaNode[] = [];
    for (const name of ['pg1', 'pg2', 'pg3'])
      nodes.push({
        name,
        pgPort: await freePort(),
        restPort: await freePort(),
        dataDir: join(dir, name),
        config: join(dir, `${name}.yml`),
      });
    const cluster = new HaCluster(
      dir,
      `audit-ha-${process.pid}-${Date.now().toString(36)}`,
      nodes,
      await freePort(),
      await freePort(),
      await freePort(),
    );
    try {
      await cluster.boot(user, options.log ?? (() => undefined));
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** A URL of `database` through HAProxy: 'rw' the leader, 'ro' the replicas. */
  url(side: 'rw' | 'ro', database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${side === 'rw' ? this.rwPort : this.roPort}/${database}`;
  }

  /** A URL of `database` on one node, directly. */
  nodeUrl(node: HaNode, database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${node.pgPort}/${database}`;
  }

  /** The node whose Patroni answers 200 to `/primary` (the leader with the lock), or null. */
  async leader(): Promise<HaNode | null> {
    for (const node of this.nodes) if ((await this.rest(node, '/primary')) === 200) return node;
    return null;
  }

  /** The nodes whose Patroni answers 200 to `/replica` (running, streaming replicas). */
  async replicas(): Promise<HaNode[]> {
    const up: HaNode[] = [];
    for (const node of this.nodes) if ((await this.rest(node, '/replica')) === 200) up.push(node);
    return up;
  }

  /**
   * Waits until a leader holds the lock, the other two nodes are running replicas, one of them
   * is the synchronous standby, and HAProxy routes the read-write port to the leader.
   */
  async waitHealthy(timeoutMs = 120_000): Promise<HaNode> {
    const started = Date.now();
    let last = '';
    while (Date.now() - started < timeoutMs) {
      const leader = await this.leader();
      const replicas = await this.replicas();
      const sync = (await this.members()).some(
        (m) => /sync/i.test(m.role) && ['running', 'streaming'].includes(m.state),
      );
      last = `leader ${leader?.name ?? 'none'}, replicas ${replicas.map((r) => r.name).join(',') || 'none'}, sync standby ${sync}`;
      if (leader && replicas.length === 2 && sync && (await this.routesWritesTo(leader))) return leader;
      await sleep(250);
    }
    throw new Error(`the HA cluster did not become healthy in ${timeoutMs} ms (${last}); logs in ${this.dir}`);
  }

  /** SIGKILL of the leader's postmaster (what a crash of PostgreSQL is): its pid from postmaster.pid. */
  async killLeaderPostgres(): Promise<{ node: HaNode; at: number }> {
    const node = await this.leader();
    if (!node) throw new Error('no leader to kill');
    const pid = postmasterOf(node.dataDir);
    if (pid === null) throw new Error(`no postmaster running on ${node.dataDir}`);
    process.kill(pid, 'SIGKILL');
    return { node, at: Date.now() };
  }

  /**
   * A planned switchover with `patronictl` to the synchronous standby (in synchronous mode the only
   * candidate Patroni accepts); resolves once the candidate leads.
   */
  async switchover(): Promise<{ from: HaNode; to: HaNode; at: number }> {
    const from = await this.leader();
    const standby = (await this.members()).find((m) => /sync/i.test(m.role))?.name;
    const to = this.nodes.find((node) => node.name === standby);
    if (!from || !to) throw new Error('a switchover needs a leader and a synchronous standby');
    const at = Date.now();
    const output = await this.patronictl(['switchover', '--leader', from.name, '--candidate', to.name, '--force']);
    await this.until(
      `the switchover to ${to.name} (${output.trim()})`,
      async () => (await this.leader()) === to,
      60_000,
    );
    return { from, to, at };
  }

  /** `patronictl list` as Patroni's REST reports it: each member's name, role and state. */
  async members(): Promise<{ name: string; role: string; state: string; lag?: number | string }[]> {
    for (const node of this.nodes) {
      const answer = await fetch(`http://127.0.0.1:${node.restPort}/cluster`, { signal: AbortSignal.timeout(1000) })
        .then((res) =>
          res.ok ? (res.json() as Promise<{ members: { name: string; role: string; state: string }[] }>) : null,
        )
        .catch(() => null);
      if (answer) return answer.members;
    }
    return [];
  }

  /** `patronictl` on this cluster's configuration (its output), without blocking the event loop. */
  async patronictl(args: string[]): Promise<string> {
    const { stdout } = await run('patronictl', ['-c', this.nodes[0]!.config, ...args], { timeout: 60_000 });
    return stdout;
  }

  /** Ends HAProxy, the Patronis, every PostgreSQL and etcd, and removes the folder. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const child of this.children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    // Patroni starts PostgreSQL detached from itself: each postmaster by its pid file.
    for (const node of this.nodes) {
      const pid = postmasterOf(node.dataDir);
      if (pid === null) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    await Promise.all(
      this.children
        .filter((child) => child.exitCode === null && child.signalCode === null)
        .map((child) => new Promise<void>((done) => child.once('exit', () => done()))),
    );
    // The backends of a killed postmaster leave on their own within a moment; the files may go now
    // (HA_KEEP=1 keeps them: the logs of each program are there).
    if (process.env.HA_KEEP !== '1') rmSync(this.dir, { recursive: true, force: true });
  }

  private async boot(user: { uid: number; gid: number } | null, log: (line: string) => void): Promise<void> {
    const etcdDir = join(this.dir, 'etcd');
    const peerPort = await freePort();
    this.launch('etcd', [
      ...['--name', 'etcd1', '--data-dir', etcdDir],
      ...['--listen-client-urls', `http://127.0.0.1:${this.etcdPort}`],
      ...['--advertise-client-urls', `http://127.0.0.1:${this.etcdPort}`],
      ...['--listen-peer-urls', `http://127.0.0.1:${peerPort}`],
      ...['--initial-advertise-peer-urls', `http://127.0.0.1:${peerPort}`],
      ...['--initial-cluster', `etcd1=http://127.0.0.1:${peerPort}`],
      ...['--initial-cluster-state', 'new', '--log-level', 'warn'],
    ]);
    await this.until(
      'etcd',
      async () => (await fetch(`http://127.0.0.1:${this.etcdPort}/health`).catch(() => null))?.ok === true,
    );
    log(`etcd on 127.0.0.1:${this.etcdPort}`);
    for (const node of this.nodes) {
      writeFileSync(node.config, this.patroniConfig(node));
      if (user) chownSync(node.config, user.uid, user.gid);
    }
    // The first node bootstraps (initdb); the others clone it (pg_basebackup) once it leads.
    this.launch('patroni', [this.nodes[0]!.config], user);
    await this.until('the first leader', async () => (await this.leader()) !== null, 60_000);
    log(`leader ${this.nodes[0]!.name} on 127.0.0.1:${this.nodes[0]!.pgPort}`);
    for (const node of this.nodes.slice(1)) this.launch('patroni', [node.config], user);
    const haproxyConfig = join(this.dir, 'haproxy.cfg');
    writeFileSync(haproxyConfig, this.haproxyConfig());
    this.launch('haproxy', ['-f', haproxyConfig, '-db']);
    const leader = await this.waitHealthy();
    log(`healthy: leader ${leader.name}, read-write 127.0.0.1:${this.rwPort}, read-only 127.0.0.1:${this.roPort}`);
  }

  private patroniConfig(node: HaNode): string {
    const socketDir = join(this.dir, `${node.name}-socket`);
    const user = postgresUser();
    mkdirSync(socketDir, { recursive: true });
    if (user) chownSync(socketDir, user.uid, user.gid);
    return `# Patroni for ${node.name} (test/ha/cluster.ts): docker/ha/patroni.yml with CI's ports and folders.
scope: ${this.scope}
name: ${node.name}
log:
  level: WARNING
restapi:
  listen: 127.0.0.1:${node.restPort}
  connect_address: 127.0.0.1:${node.restPort}
etcd3:
  hosts: 127.0.0.1:${this.etcdPort}
bootstrap:
  dcs:
    # Failure detection: the leader's lock lives ttl s; loop_wait + 2 * retry_timeout <= ttl.
    ttl: 10
    loop_wait: 1
    retry_timeout: 4
    # A leader whose PostgreSQL crashed hands over at once instead of recovering in place (default 300 s).
    primary_start_timeout: 0
    maximum_lag_on_failover: 1048576
    # A commit is acknowledged only once the synchronous standby has it; only that standby may be promoted.
    synchronous_mode: true
    postgresql:
      # The old leader rejoins as a replica, rewound to the new timeline (cloned again if that fails, below).
      use_pg_rewind: true
      use_slots: true
      parameters:
        max_connections: 200
        wal_keep_size: 256MB
        # A replica read (an export) is not cancelled by the leader's vacuum (docs/contract.md §21).
        hot_standby_feedback: "on"
        # CI only: the drill kills processes, not the machine, so the page cache survives; docker/ha keeps fsync on.
        fsync: "off"
  initdb:
    - encoding: UTF8
  pg_hba:
    - host replication replicator 127.0.0.1/32 trust
    - host all all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:${node.pgPort}
  connect_address: 127.0.0.1:${node.pgPort}
  data_dir: ${node.dataDir}
  bin_dir: ${PG_BIN}
  pgpass: ${join(this.dir, `${node.name}.pgpass`)}
  authentication:
    superuser:
      username: postgres
      password: postgres
    replication:
      username: replicator
      password: replicator
  parameters:
    unix_socket_directories: ${socketDir}
  remove_data_directory_on_rewind_failure: true
  remove_data_directory_on_diverged_timelines: true
  basebackup:
    - checkpoint: fast
`;
  }

  private haproxyConfig(): string {
    const servers = (check: string) =>
      this.nodes
        .map((n) => `  server ${n.name} 127.0.0.1:${n.pgPort} maxconn 200 check port ${n.restPort}${check}`)
        .join('\n');
    return `# HAProxy (test/ha/cluster.ts): docker/ha/haproxy.cfg with CI's ports.
global
  maxconn 2000
defaults
  mode tcp
  retries 2
  timeout connect 2s
  timeout client 30m
  timeout server 30m
  timeout check 1s
  # Checked every 500 ms; down after 2 failures; a node that goes down drops its sessions at once.
  default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
listen rw
  bind 127.0.0.1:${this.rwPort}
  option httpchk OPTIONS /primary
  http-check expect status 200
${servers('')}
listen ro
  bind 127.0.0.1:${this.roPort}
  balance roundrobin
  option httpchk OPTIONS /replica
  http-check expect status 200
${servers('')}
`;
  }

  /** Whether a new connection on the read-write port reaches `leader` (HAProxy has seen its check). */
  private async routesWritesTo(leader: HaNode): Promise<boolean> {
    const { Client } = await import('pg');
    const client = new Client({ connectionString: this.url('rw'), connectionTimeoutMillis: 1000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const { rows } = await client.query<{ port: number; recovery: boolean }>(
        `SELECT current_setting('port')::int AS port, pg_is_in_recovery() AS recovery`,
      );
      return rows[0]?.port === leader.pgPort && rows[0].recovery === false;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  private async rest(node: HaNode, path: string): Promise<number> {
    return await fetch(`http://127.0.0.1:${node.restPort}${path}`, { signal: AbortSignal.timeout(1000) }).then(
      (res) => res.status,
      () => 0,
    );
  }

  private launch(program: string, args: string[], user: { uid: number; gid: number } | null = null): ChildProcess {
    const log = openSync(join(this.dir, `${program}-${this.children.length}.log`), 'a');
    const child = spawn(program, args, {
      cwd: this.dir,
      stdio: ['ignore', log, log],
      env: { PATH: process.env.PATH ?? '', HOME: this.dir, LANG: 'C.UTF-8' },
      ...(user ?? {}),
    });
    this.children.push(child);
    return child;
  }

  private async until(what: string, ready: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
    const started = Date.now();
    while (Date.now() - started < timeoutMs) {
      if (await ready()) return;
      await sleep(200);
    }
    throw new Error(`${what} did not come up in ${timeoutMs} ms; logs in ${this.dir}`);
  }
}

/**
 * The pid of the postmaster serving `dataDir`, from its postmaster.pid, only while that process is
 * a postgres on that directory (a stale file's pid may belong to anything else by now: never
 * signalled). Null when there is none.
 */
function postmasterOf(dataDir: string): number | null {
  const pidFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 1) return null;
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return /postgres/.test(args[0] ?? '') && args.includes(dataDir) ? pid : null;
  } catch {
    return null; // gone
  }
}
