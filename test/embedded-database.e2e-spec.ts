import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Logger } from '@nestjs/common';
import { CHECKPOINT_KEY_NAME, formatVerifierKey } from '@app/hashing';
import { DatabaseLocator, EmbeddedPostgres } from '@app/database';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

/*
 * The embedded database has no authentication: whoever reaches it is superuser and can disable
 * the append-only triggers. So it must be reachable by the service alone (docs/contract.md §8), and its
 * files by the service's user alone. These run on the embedded database in either e2e mode.
 */

/** Every path under root (root included) whose mode grants anything to group or others. */
function openToOthers(root: string): string[] {
  const found: string[] = [];
  const visit = (path: string): void => {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return;
    if ((stat.mode & 0o077) !== 0) found.push(`${relative(root, path) || '.'} ${(stat.mode & 0o777).toString(8)}`);
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(root);
  return found;
}

/** Ports of the TCP sockets this process listens on (Linux /proc). */
function listeningTcpPorts(): number[] {
  const inodes = new Set(
    readdirSync('/proc/self/fd').flatMap((fd) => {
      try {
        return [/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))?.[1]].filter(Boolean);
      } catch {
        return [];
      }
    }),
  );
  return ['/proc/self/net/tcp', '/proc/self/net/tcp6']
    .flatMap((table) => readFileSync(table, 'utf8').trim().split('\n').slice(1))
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => cols[3] === '0A' && inodes.has(cols[9]))
    .map((cols) => parseInt(cols[1]!.split(':')[1]!, 16));
}

describe('the embedded database is reachable by the service alone (§8)', () => {
  let root: string;
  let dataDir: string;
  let keyFile: string;
  let keyPem: string;
  let t: TestApp;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'audit-private-'));
    dataDir = join(root, 'data');
    keyFile = join(root, 'secrets', 'checkpoint-signing-key.pem');
    mkdirSync(join(root, 'secrets'));
    keyPem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    writeFileSync(keyFile, keyPem, { mode: 0o600 });
    t = await startTestApp({ signingKeyFile: keyFile }, { url: null, dataDir });
  });
  afterAll(async () => {
    await t.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('creates DATA_DIR mode 0700, and nothing in it is open to other users after start and after appends', async () => {
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(openToOthers(dataDir)).toEqual([]);

    for (const i of [1, 2, 3]) {
      await t
        .http()
        .post('/v1/events')
        .set(...bearer(KEYS.acme))
        .send({ actor: 'alice', action: 'user.login', context: { i }, chain: 'private' })
        .expect(201);
    }
    const chainId = (
      await t
        .http()
        .get('/v1/chains')
        .set(...bearer(KEYS.acme))
        .expect(200)
    ).body.data[0].id;
    await t
      .http()
      .get(`/v1/chain/${chainId}/checkpoint`)
      .set(...bearer(KEYS.acme))
      .expect(200);
    // Read in-process on the one connection: events, checkpoints and the packed Merkle nodes.
    const verified = await t
      .http()
      .get(`/v1/chain/${chainId}/verify`)
      .set(...bearer(KEYS.acme))
      .expect(200);
    expect(verified.body.data).toMatchObject({ valid: true, errors: [], checkpointsChecked: 1 });

    expect(openToOthers(dataDir)).toEqual([]);
  });

  it('listens on no TCP port: pg reaches it through a Unix socket in DATA_DIR/socket, a directory of mode 0700', () => {
    expect(t.app.getHttpServer().listening).toBe(false); // supertest listens only during a request
    expect(listeningTcpPorts()).toEqual([]);

    const url = new URL(t.app.get(DatabaseLocator).settings.url);
    const socketDir = join(dataDir, 'socket');
    expect(url.searchParams.get('host')).toBe(socketDir);
    expect(statSync(socketDir).mode & 0o777).toBe(0o700);
    expect(readdirSync(socketDir)).toEqual(['.s.PGSQL.5432']);
    expect(lstatSync(join(socketDir, '.s.PGSQL.5432')).isSocket()).toBe(true);
  });

  it('refuses a second instance on the same DATA_DIR, whose database it would corrupt', async () => {
    await expect(EmbeddedPostgres.start(dataDir, jest.fn())).rejects.toThrow(
      /Another running instance serves the embedded database/,
    );
  });

  it('signs checkpoints with the key of SIGNING_KEY_FILE, and writes no key into DATA_DIR', async () => {
    const res = await t.http().get('/v1/checkpoint-key').expect(200);
    expect(res.text.trim()).toBe(formatVerifierKey(CHECKPOINT_KEY_NAME, createPrivateKey(keyPem)));
    expect(existsSync(join(dataDir, 'checkpoint-signing-key'))).toBe(false);
  });
});

describe('an existing DATA_DIR', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'audit-existing-'));
  });
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('open to other users is tightened at start, with a warning naming what changed', async () => {
    chmodSync(dataDir, 0o755);
    writeFileSync(join(dataDir, 'notes.txt'), 'x');
    chmodSync(join(dataDir, 'notes.txt'), 0o644);
    const warn = jest.spyOn(Logger.prototype, 'warn');

    const t = await startTestApp({}, { url: null, dataDir });
    try {
      expect(openToOthers(dataDir)).toEqual([]);
      expect(warn).toHaveBeenCalledWith(expect.stringMatching(/had 2 entries open to other users \(\., notes\.txt\)/));
    } finally {
      await t.close();
    }
  });

  it('restarted, warns of nothing and has nothing open to other users (PGlite rewrites files 0644 at every start)', async () => {
    const warn = jest.fn();
    await (await EmbeddedPostgres.start(dataDir, warn)).stop();
    expect(openToOthers(dataDir)).toEqual([]);

    const sut = await EmbeddedPostgres.start(dataDir, warn);
    try {
      expect(openToOthers(dataDir)).toEqual([]);
    } finally {
      await sut.stop();
    }
    expect(warn).not.toHaveBeenCalled();
  });

  it('with the socket of a killed instance starts, and the socket is gone after stop', async () => {
    const socket = join(dataDir, 'socket', '.s.PGSQL.5432');
    mkdirSync(join(dataDir, 'socket'), { mode: 0o700 });
    const killed = spawnSync(process.execPath, [
      '-e',
      `require('net').createServer().listen(${JSON.stringify(socket)}, () => process.kill(process.pid, 'SIGKILL'))`,
    ]);
    expect(killed.signal).toBe('SIGKILL');
    expect(lstatSync(socket).isSocket()).toBe(true);

    const sut = await EmbeddedPostgres.start(dataDir, jest.fn());
    await sut.stop();
    expect(existsSync(socket)).toBe(false);
  });

  it('too long for a socket path gets its socket in a fresh 0700 directory of its own, removed at stop', async () => {
    const longDir = join(dataDir, 'd'.repeat(100));
    const warn = jest.fn();

    const sut = await EmbeddedPostgres.start(longDir, warn);
    const socketDir = sut.socketDir;
    try {
      expect(socketDir.startsWith(join(tmpdir(), 'audit-trail-db-'))).toBe(true);
      expect(statSync(socketDir).mode & 0o777).toBe(0o700);
      expect(lstatSync(join(socketDir, '.s.PGSQL.5432')).isSocket()).toBe(true);
      expect(warn).toHaveBeenCalledWith(expect.stringMatching(/too long a path for a Unix socket/));
      expect(openToOthers(longDir)).toEqual([]);
    } finally {
      await sut.stop();
    }
    expect(existsSync(socketDir)).toBe(false);
  });
});

/** An embedded database in a process of its own (test/support/embedded-instance.ts). */
interface OtherInstance {
  /** `started`, or the reason it refused, once known. */
  outcome: Promise<{ started: boolean; stderr: string }>;
  /** Resolves with the exit code once the process has gone. */
  exited: Promise<number | null>;
  child: ChildProcess;
}

/** Every process started here, killed after each test whatever its outcome. */
const started: ChildProcess[] = [];

function otherInstance(dataDir: string): OtherInstance {
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', join(__dirname, 'support', 'embedded-instance.ts'), dataDir],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TS_NODE_TRANSPILE_ONLY: '1' } },
  );
  started.push(child);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const outcome = new Promise<{ started: boolean; stderr: string }>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('started')) resolve({ started: true, stderr });
    });
    void exited.then(() => resolve({ started: false, stderr }));
  });
  return { child, outcome, exited };
}

describe('one running instance per DATA_DIR, whatever the length of its path (issue 18, item 8)', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'audit-one-'));
  });
  afterEach(() => {
    for (const child of started.splice(0))
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  });

  it.each([
    ['short', 10],
    ['about 110 characters long (its socket elsewhere)', 110],
  ])(
    'a DATA_DIR %s: refused while another process serves it, started once that one is killed or stopped',
    async (_name, length) => {
      const dataDir = join(root, 'd'.repeat(Math.max(1, length - root.length - 1)));
      if (length > 100) expect(dataDir.length).toBeGreaterThanOrEqual(108);

      // A first instance in another process: this one is refused while it runs.
      const first = otherInstance(dataDir);
      expect((await first.outcome).started).toBe(true);
      await expect(EmbeddedPostgres.start(dataDir, jest.fn())).rejects.toThrow(
        /Another running instance serves the embedded database in .* \(pid \d+\)/,
      );

      // Killed, it leaves its lock (and socket) behind; they do not block a restart.
      first.child.kill('SIGKILL');
      await first.exited;
      const sut = await EmbeddedPostgres.start(dataDir, jest.fn());
      try {
        // Now this one runs: another process is refused.
        const second = otherInstance(dataDir);
        expect(await second.outcome).toEqual({
          started: false,
          stderr: expect.stringMatching(/Another running instance serves the embedded database in .* \(pid \d+\)/),
        });
        expect(await second.exited).toBe(3);
      } finally {
        await sut.stop();
      }

      // Stopped, it lets the next one start.
      const third = otherInstance(dataDir);
      expect((await third.outcome).started).toBe(true);
      third.child.kill('SIGTERM');
      expect(await third.exited).toBe(0);
      expect(readdirSync(dataDir).filter((name) => name.startsWith('instance.lock'))).toEqual([]);
    },
  );
});
