import { ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConsole } from './support/console-build';
import { EMBEDDED_TEMPLATE_ENV, PGLITE_FOLDER } from './support/postgres';

/*
 * What a newcomer's `npm start` prints (issue 40 item 8), from the real entry point in a process of its
 * own on the embedded default without API_KEYS: Nest's route and module lines at debug, not info; the
 * keys in no log line; and, last, a short block with the console's URL and the two development keys,
 * which work. `GET /` leads to the console.
 */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('the start-up output (embedded default, no API_KEYS)', () => {
  let child: ChildProcess | undefined;
  let dataDir: string;
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('ends with the console URL and the development keys, after every log line; route lines are debug', async () => {
    buildConsole();
    // A copy of this run's migrated embedded template when there is one (it starts in seconds), else a new directory.
    dataDir = mkdtempSync(join(tmpdir(), 'audit-startup-'));
    const template = process.env[EMBEDDED_TEMPLATE_ENV];
    if (template) cpSync(join(template, PGLITE_FOLDER), join(dataDir, PGLITE_FOLDER), { recursive: true });
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir };
    for (const name of ['DATABASE_URL', 'API_KEYS', 'LOG_LEVEL', 'LOG_FORMAT']) delete env[name];
    env.METRICS_PORT = '0';
    env.TS_NODE_TRANSPILE_ONLY = '1';
    const started = Date.now();
    child = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'apps/api/src/main.ts'],
      { cwd: join(__dirname, '..'), env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    // Every chunk in the order it came, from either stream.
    const chunks: { stream: 'out' | 'err'; text: string }[] = [];
    child.stdout!.on('data', (c: Buffer) => chunks.push({ stream: 'out', text: c.toString() }));
    child.stderr!.on('data', (c: Buffer) => chunks.push({ stream: 'err', text: c.toString() }));
    const all = () => chunks.map((c) => c.text).join('');
    for (const deadline = Date.now() + 90_000; !/Development operator key: +\S+/.test(all());) {
      if (Date.now() > deadline || child.exitCode !== null)
        throw new Error(`no start-up block:\n${all().slice(-3000)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    console.log(`start-up: the block printed ${Date.now() - started} ms after the process started`);
    // Nothing more comes once it is printed (a second to be sure).
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    const block = chunks.findIndex((c) => c.text.includes('Audit trail is ready.'));
    expect(block).toBeGreaterThanOrEqual(0);
    // After it (should it come in more than one chunk): nothing on stdout, no log line.
    expect(chunks.slice(block + 1).filter((c) => c.stream === 'out' || c.text.includes('{'))).toEqual([]);
    const text = chunks
      .slice(block)
      .map((c) => c.text)
      .join('');
    expect(text).toContain(`Console:                  http://127.0.0.1:${port}/console`);
    const key = /Development key: +(\S+)/.exec(text)![1]!;
    const operatorKey = /Development operator key: +(\S+)/.exec(text)![1]!;
    expect(text.trim().split('\n').length).toBeLessThanOrEqual(14);

    // stdout: JSON lines only, none at info about a route or module mapped, none holding a key.
    const lines = chunks
      .filter((c) => c.stream === 'out')
      .map((c) => c.text)
      .join('')
      .split('\n')
      .filter((line) => line !== '');
    const logged = lines.map((line) => JSON.parse(line) as { level: number | string; msg: string; context?: string });
    expect(logged.filter((l) => /Mapped \{|RoutesResolver|dependencies initialized/.test(l.msg))).toEqual([]);
    expect(logged.length).toBeLessThan(30);
    for (const line of lines) {
      expect(line).not.toContain(key);
      expect(line).not.toContain(operatorKey);
    }

    // The keys work, and are named as what they are on the Keys page.
    const base = `http://127.0.0.1:${port}`;
    const me = (await (await fetch(`${base}/v1/me`, { headers: { Authorization: `Bearer ${key}` } })).json()) as {
      data: { accountId: string };
    };
    const keys = (await (
      await fetch(`${base}/v1/accounts/${me.data.accountId}/keys`, { headers: { Authorization: `Bearer ${key}` } })
    ).json()) as { data: { name: string }[] };
    expect(keys.data.map((k) => k.name)).toEqual(['development key']);
    const accounts = await fetch(`${base}/v1/accounts`, { headers: { Authorization: `Bearer ${operatorKey}` } });
    expect(accounts.status).toBe(200);
    // The address it names leads to the console.
    const root = await fetch(`${base}/`, { redirect: 'manual' });
    expect([root.status, root.headers.get('location')]).toEqual([302, '/console']);
  }, 120_000);
});
