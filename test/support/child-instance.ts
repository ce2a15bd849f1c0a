import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** A free TCP port on 127.0.0.1, as the system hands it out. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/**
 * Another instance of the service in a process of its own (apps/api/src/main.ts through ts-node),
 * on the given environment: what a second deployment sees. In-process apps would share the
 * passport strategy registry (one per process), so a second instance must be a second process.
 */
export async function startChildInstance(
  env: Record<string, string>,
  options: ChildOptions = {},
): Promise<{ url: string; stop: () => Promise<void>; kill: () => Promise<void>; stderr: () => string }> {
  const instance = await spawnChildInstance(env, options);
  const started = Date.now();
  while (Date.now() - started < 90_000) {
    if (instance.exited()) throw new Error(`the second instance exited: ${instance.stderr()}`);
    const ready = await fetch(`${instance.url}/health/ready`).then(
      (res) => res.status === 200,
      () => false,
    );
    if (ready) return instance;
    await sleep(250);
  }
  await instance.stop();
  throw new Error(`the second instance did not become ready: ${instance.stderr()}`);
}

/** How a child instance runs: `logs`, its log lines (stdout) kept with its stderr. */
export interface ChildOptions {
  logs?: boolean;
}

/** startChildInstance without waiting for it to be ready: the process as it starts. */
export async function spawnChildInstance(
  env: Record<string, string>,
  options: ChildOptions = {},
): Promise<{
  url: string;
  stop: () => Promise<void>;
  kill: () => Promise<void>;
  exited: () => boolean;
  stderr: () => string;
}> {
  const port = await freePort();
  // DATA_DIR in `env`: a directory the caller prepared (keys to start with); removed at the stop like a new one.
  const dataDir = env.DATA_DIR ?? mkdtempSync(join(tmpdir(), 'audit-child-'));
  const root = resolve(__dirname, '../..');
  const child: ChildProcess = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'apps/api/src/main.ts'],
    {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        // The server's password when its URL carries none (compose's e2e service: scram-sha-256, not trust).
        ...(process.env.PGPASSWORD === undefined ? {} : { PGPASSWORD: process.env.PGPASSWORD }),
        ...env,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
      },
      stdio: ['ignore', options.logs ? 'pipe' : 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const url = `http://127.0.0.1:${port}`;
  /** SIGTERM, and SIGKILL if it has not exited 30 s later: a stop never leaves a process behind (nor the run waiting on it). */
  const stop = async () => {
    child.kill('SIGTERM');
    const late = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(late);
    rmSync(dataDir, { recursive: true, force: true });
  };
  /** SIGKILL: the process dies at once, mid-whatever (no shutdown hook runs). */
  const kill = async () => {
    child.kill('SIGKILL');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { url, stop, kill, exited: () => child.exitCode !== null || child.signalCode !== null, stderr: () => stderr };
}
