import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../cli';
import { FIRST_CONTACT_ATTEMPTS, MAX_ATTEMPTS } from './batch-sender';

const KEY = 'test-key';

/** What the fake does with request number n (1-based) instead of answering normally. */
type Fault = 'reset' | 'commit-then-reset' | { status: number; retryAfter?: string } | undefined;

interface Seen {
  key: string | undefined;
  count: number;
  at: number;
}

/**
 * POST /v1/events/batch as docs/contract.md §9 says, minimally: bearer key, 1-1000 items, all or nothing,
 * every bad item named (`events[i]`, `events[i].actor`), Idempotency-Key replays with
 * Idempotent-Replayed: true and 422 for another body. Appended events are kept in order.
 */
class FakeBatchServer {
  readonly stored: Record<string, unknown>[] = [];
  readonly seen: Seen[] = [];
  fault: (n: number) => Fault = () => undefined;
  private readonly keys = new Map<string, { body: string; status: number; response: string }>();
  private readonly server: Server = createServer((req, res) => void this.handle(req, res));

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** Lines (from each event's context.line) in the order they were appended. */
  lines(): number[] {
    return this.stored.map((e) => (e.context as { line: number }).line);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const key = req.headers['idempotency-key'] as string | undefined;
    const send = (status: number, json: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(json));
    };
    if (req.method !== 'POST' || req.url !== '/v1/events/batch') return send(404, { error: { code: 'NOT_FOUND' } });
    if (req.headers.authorization !== `Bearer ${KEY}`) return send(401, { error: { code: 'UNAUTHORIZED' } });
    const events = (JSON.parse(body) as { events: unknown[] }).events;
    this.seen.push({ key, count: events.length, at: Date.now() });
    const fault = this.fault(this.seen.length);
    if (fault === 'reset') return void req.socket.destroy();
    if (typeof fault === 'object')
      return send(
        fault.status,
        { error: { code: 'RATE_LIMITED' } },
        fault.retryAfter ? { 'retry-after': fault.retryAfter } : {},
      );
    const first = key === undefined ? undefined : this.keys.get(key);
    if (first && first.body !== body) return send(422, { error: { code: 'IDEMPOTENCY_KEY_REUSED' } });
    if (first) {
      res.writeHead(first.status, { 'content-type': 'application/json', 'idempotent-replayed': 'true' });
      return void res.end(first.response);
    }
    const fields = events.flatMap((e, i) => {
      if (e === null || typeof e !== 'object' || Array.isArray(e))
        return [{ field: `events[${i}]`, message: 'must be an object' }];
      const actor = (e as { actor?: unknown }).actor;
      // Stands for what only the server knows (the local check runs the same field rules first).
      return actor === 'refused' ? [{ field: `events[${i}].actor`, message: 'actor is refused by the server' }] : [];
    });
    if (fields.length > 0)
      return send(400, { error: { code: 'VALIDATION_ERROR', message: 'Invalid request', details: { fields } } });
    this.stored.push(...(events as Record<string, unknown>[]));
    const response = JSON.stringify({ data: events });
    if (key !== undefined) this.keys.set(key, { body, status: 201, response });
    if (fault === 'commit-then-reset') return void req.socket.destroy();
    res.writeHead(201, { 'content-type': 'application/json' }).end(response);
  }
}

const event = (line: number, actor = 'alice') => JSON.stringify({ actor, action: 'doc.update', context: { line } });

describe('ingest', () => {
  let dir: string;
  let fake: FakeBatchServer;
  let url: string;
  let sleeps: number[];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ingest-spec-'));
    fake = new FakeBatchServer();
    url = await fake.start();
    sleeps = [];
  });
  afterEach(async () => {
    await fake.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A file of `n` lines, line k being event(k), with `overrides` replacing some lines. */
  function file(n: number, overrides: Record<number, string> = {}, name = 'events.ndjson'): string {
    const path = join(dir, name);
    const lines = Array.from({ length: n }, (_, i) => overrides[i + 1] ?? event(i + 1));
    writeFileSync(path, `${lines.join('\n')}\n`);
    return path;
  }

  const prefix = (path: string) =>
    `ingest:${createHash('sha256').update(readFileSync(path)).digest('hex').slice(0, 16)}`;

  async function ingest(
    path: string,
    extra: string[] = [],
    options: { tty?: boolean; realSleep?: boolean; url?: string } = {},
  ) {
    let out = '';
    let err = '';
    const code = await run(['ingest', path, '--url', options.url ?? url, '--key', KEY, ...extra], {
      out: (s) => (out += s),
      err: (s) => (err += s),
      env: {},
      errIsTTY: options.tty ?? false,
      sleep: options.realSleep ? undefined : (ms) => Promise.resolve(void sleeps.push(ms)),
    });
    return { code, out, err };
  }

  it('sends fixed line ranges as batches, blank lines ignored, each range keyed by the file hash (exit 0)', async () => {
    const path = file(250, { 5: '', 150: '   ' });
    const sut = await ingest(path);
    expect(sut).toMatchObject({ code: 0, err: '' });
    expect(fake.seen.map((s) => [s.key, s.count])).toEqual([
      [`${prefix(path)}:1-100`, 99],
      [`${prefix(path)}:101-200`, 99],
      [`${prefix(path)}:201-250`, 50],
    ]);
    expect(fake.lines()).toEqual(Array.from({ length: 250 }, (_, i) => i + 1).filter((n) => n !== 5 && n !== 150));
    expect(sut.out).toMatch(/248 events appended in/);
  });

  it('honours --batch-size and sends the lines byte for byte', async () => {
    const path = file(5, { 2: '{"actor":"a","action":"b","context":{"line":2,"x":"é😀","n":1.50}}' });
    expect((await ingest(path, ['--batch-size', '2'])).code).toBe(0);
    expect(fake.seen.map((s) => s.key)).toEqual([`${prefix(path)}:1-2`, `${prefix(path)}:3-4`, `${prefix(path)}:5-5`]);
    expect(fake.stored[1]).toEqual({ actor: 'a', action: 'b', context: { line: 2, x: 'é😀', n: 1.5 } });
  });

  it('ends a range early rather than send a body over 8 MiB; a line that cannot fit in any is a bad line', async () => {
    // Valid events (a context is at most 32 KiB once serialized), made long by whitespace the body keeps.
    const big = (line: number, mib: number) =>
      `{"actor":"a","action":"b","context":{"line":${line}}${' '.repeat(mib * 1024 * 1024)}}`;
    const path = file(4, { 1: big(1, 3), 2: big(2, 3), 3: big(3, 3), 4: big(4, 9) });
    const sut = await ingest(path, ['--skip-invalid']);
    expect(sut.code).toBe(1);
    expect(sut.err).toMatch(/^line 4: line too long for one request$/m);
    expect(fake.seen.map((s) => [s.key, s.count])).toEqual([
      [`${prefix(path)}:1-2`, 2],
      [`${prefix(path)}:3-4`, 1],
    ]);
    expect(fake.lines()).toEqual([1, 2, 3]);
  });

  it('uses the same keys on a second run, which appends nothing (replays); a changed file gets new keys', async () => {
    const path = file(30);
    await ingest(path, ['--batch-size', '10']);
    const again = await ingest(path, ['--batch-size', '10']);
    expect(again.code).toBe(0);
    expect(fake.seen.slice(3).map((s) => s.key)).toEqual(fake.seen.slice(0, 3).map((s) => s.key));
    expect(fake.stored).toHaveLength(30);
    expect(again.out).toMatch(/0 events appended, 30 already in \(replayed\)/);

    const changed = file(31, {}, 'changed.ndjson');
    await ingest(changed, ['--batch-size', '10']);
    expect(prefix(changed)).not.toBe(prefix(path));
    expect(fake.seen.slice(6).map((s) => s.key)).toEqual(
      [1, 11, 21, 31].map((n) => `${prefix(changed)}:${n}-${Math.min(n + 9, 31)}`),
    );
  });

  it('waits as long as Retry-After says on 429 and 503, and backs off on 5xx', async () => {
    const faults: Record<number, Fault> = {
      2: { status: 429, retryAfter: '2' },
      3: { status: 503, retryAfter: '1' },
      4: { status: 500 },
      5: { status: 502 },
    };
    fake.fault = (n) => faults[n];
    const sut = await ingest(file(20), ['--batch-size', '10']);
    expect(sut.code).toBe(0);
    // The backoff doubles with each attempt at the same batch (its 3rd and 4th here).
    expect(sleeps).toEqual([2000, 1000, 2000, 4000]);
    expect(fake.lines()).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('really waits for Retry-After before the retry', async () => {
    fake.fault = (n) => (n === 1 ? { status: 429, retryAfter: '1' } : undefined);
    expect((await ingest(file(3), [], { realSleep: true })).code).toBe(0);
    expect(fake.seen[1]!.at - fake.seen[0]!.at).toBeGreaterThanOrEqual(1000);
  });

  it('reports malformed lines with their numbers and sends nothing without --skip-invalid (exit 1)', async () => {
    const sut = await ingest(file(12, { 3: '{"actor": "a",', 7: '[1,2]', 9: 'null' }));
    expect(sut.code).toBe(1);
    expect(sut.err).toMatch(/^line 3: not JSON/m);
    expect(sut.err).toMatch(/^line 7: not a JSON object$/m);
    expect(sut.err).toMatch(/^line 9: not a JSON object$/m);
    expect(sut.err).toMatch(/3 bad line\(s\); nothing was sent/);
    expect(fake.seen).toEqual([]);
  });

  it('names every line the service would refuse, by its own rules, before sending anything (exit 1)', async () => {
    const sut = await ingest(
      file(12, {
        2: '{"actor":""}',
        4: 'not json',
        6: '{"actor":"a","action":"b","extra":1}',
        7: '{"actor":"a","actor":"b","action":"c"}',
        8: '{"actor":"a","action":"b","context":{"k":"\\u0000"}}',
        9: '{"actor":"a","action":"b","chain":"no spaces"}',
        10: `{"actor":"${'x'.repeat(300)}","action":"b"}`,
        11: '{"actor":"a\\u001b[8m","action":"b","\\u001b[8mhidden":1}',
      }),
    );
    expect(sut.code).toBe(1);
    const lines = sut.err.split('\n');
    const on = (n: number) => lines.filter((l) => l.startsWith(`line ${n}: `));
    expect(on(2)).toEqual([expect.stringMatching(/^line 2: actor: /), expect.stringMatching(/^line 2: action: /)]);
    expect(on(4)).toEqual([expect.stringMatching(/^line 4: not JSON \(/)]);
    expect(on(6)).toEqual(["line 6: extra: unknown field 'extra'"]);
    expect(on(7)).toEqual(["line 7: actor: duplicate member name 'actor'"]);
    expect(on(8)).toEqual(['line 8: context.k: context.k must not contain the NUL character (\\u0000)']);
    expect(on(9)).toEqual([expect.stringMatching(/^line 9: chain: chain must be/)]);
    expect(on(10)).toEqual([expect.stringMatching(/^line 10: actor: actor must be shorter than or equal to 256/)]);
    expect(on(11)).toEqual(["line 11: \\u001b[8mhidden: unknown field '\\u001b[8mhidden'"]);
    expect(sut.err).not.toContain('\u001b');
    expect(sut.err).toMatch(/8 bad line\(s\); nothing was sent/);
    expect([1, 3, 5, 12].flatMap(on)).toEqual([]);
    expect(fake.seen).toEqual([]);
  });

  it('maps items the server rejects back to line numbers and stops at that batch without --skip-invalid (exit 1)', async () => {
    const sut = await ingest(file(30, { 15: event(15, 'refused'), 17: event(17, 'refused') }), ['--batch-size', '10']);
    expect(sut.code).toBe(1);
    expect(sut.err).toMatch(/^line 15: actor: actor is refused by the server$/m);
    expect(sut.err).toMatch(/^line 17: actor: actor is refused by the server$/m);
    expect(fake.seen).toHaveLength(2);
    expect(fake.lines()).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    expect(sut.out).toMatch(/2 line\(s\) rejected \(15, 17\).*nothing from line 11 on was appended/);
  });

  it('--skip-invalid sends every other line, reports the bad ones (exit 1), and a re-run appends nothing', async () => {
    const path = file(30, { 3: 'not json', 15: event(15, 'refused'), 22: '"x"' });
    const sut = await ingest(path, ['--batch-size', '10', '--skip-invalid']);
    expect(sut.code).toBe(1);
    expect(sut.err).toMatch(/^line 3: not JSON/m);
    expect(sut.err).toMatch(/^line 15: actor: actor is refused by the server$/m);
    expect(sut.err).toMatch(/^line 22: not a JSON object$/m);
    const expected = Array.from({ length: 30 }, (_, i) => i + 1).filter((n) => ![3, 15, 22].includes(n));
    expect(fake.lines()).toEqual(expected);
    expect(sut.out).toMatch(/27 events appended, 3 line\(s\) rejected \(3, 15, 22\)/);

    const again = await ingest(path, ['--batch-size', '10', '--skip-invalid']);
    expect(again.code).toBe(1);
    expect(again.out).toMatch(/0 events appended, 27 already in/);
    expect(fake.lines()).toEqual(expected);
  });

  it('resumes: the server goes away mid-file (exit 2), the second run appends every line exactly once', async () => {
    const path = file(100);
    // The third batch is committed but its answer is lost; then the server is unreachable.
    fake.fault = (n) => (n === 3 ? 'commit-then-reset' : n > 3 ? 'reset' : undefined);
    const first = await ingest(path, ['--batch-size', '10']);
    expect(first.code).toBe(2);
    expect(first.err).toMatch(new RegExp(`gave up after ${MAX_ATTEMPTS} attempts`));
    expect(first.out).toMatch(/20 events appended.*stopped after line 20: the same command again resumes from there/);
    expect(fake.stored).toHaveLength(30);

    fake.fault = () => undefined;
    const second = await ingest(path, ['--batch-size', '10']);
    expect(second.code).toBe(0);
    expect(second.out).toMatch(/70 events appended, 30 already in \(replayed\)/);
    expect(fake.lines()).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  });

  it('draws progress only on a terminal', async () => {
    const tty = await ingest(file(20), ['--batch-size', '5'], { tty: true });
    expect(tty.code).toBe(0);
    expect(tty.err).toMatch(/\r.*20\/20 events · [\d,]+ events\/s/);
    const plain = await ingest(file(20, {}, 'b.ndjson'), ['--batch-size', '5']);
    expect(plain.err).toBe('');
    expect(plain.out.trim().split('\n')).toHaveLength(1);
  });

  it('exits 2 when the key is refused or the server cannot be reached', async () => {
    const path = file(3);
    let out = '';
    const refused = await run(['ingest', path, '--url', url, '--key', 'wrong'], {
      out: (s) => (out += s),
      err: () => undefined,
      env: {},
    });
    expect(refused).toBe(2);
    expect(fake.stored).toEqual([]);

    await fake.stop();
    const down = await ingest(path);
    expect(down.code).toBe(2);
    expect(down.err).toMatch(/ECONNREFUSED/);
    // Nothing went through yet: a server that cannot be reached at all is given up on quickly.
    expect(down.err).toMatch(new RegExp(`gave up after ${FIRST_CONTACT_ATTEMPTS} attempts`));
    expect(sleeps).toHaveLength(FIRST_CONTACT_ATTEMPTS - 1);
    fake = new FakeBatchServer();
    await fake.start();
  });

  it.each([
    ['no --url', ['ingest', '@file', '--key', KEY]],
    ['a --url that is not http', ['ingest', '@file', '--url', 'ftp://x', '--key', KEY]],
    ['no --key', ['ingest', '@file', '--url', 'http://127.0.0.1:1']],
    ['--batch-size 0', ['ingest', '@file', '--url', 'http://127.0.0.1:1', '--key', KEY, '--batch-size', '0']],
    ['--batch-size 1001', ['ingest', '@file', '--url', 'http://127.0.0.1:1', '--key', KEY, '--batch-size', '1001']],
    ['--batch-size abc', ['ingest', '@file', '--url', 'http://127.0.0.1:1', '--key', KEY, '--batch-size', 'abc']],
    ['two files', ['ingest', '@file', '@file', '--url', 'http://127.0.0.1:1', '--key', KEY]],
    ['a missing file', ['ingest', '/nonexistent.ndjson', '--url', 'http://127.0.0.1:1', '--key', KEY]],
    ['a file that is not UTF-8', ['ingest', '@latin1', '--url', 'http://127.0.0.1:1', '--key', KEY]],
  ])('exits 2 for %s', async (_label, args) => {
    const path = file(2);
    const latin1 = join(dir, 'latin1.ndjson');
    writeFileSync(latin1, Buffer.from('{"actor":"caf\xe9","action":"a"}\n', 'latin1'));
    let err = '';
    const code = await run(
      args.map((a) => (a === '@file' ? path : a === '@latin1' ? latin1 : a)),
      { out: () => undefined, err: (s) => (err += s), env: {}, sleep: () => Promise.resolve() },
    );
    expect(code).toBe(2);
    expect(err).not.toBe('');
    expect(fake.seen).toEqual([]);
  });
});
