import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Http } from '../http';
import { Recorder } from './recorder';
import { SpoolFullError, SpoolLockedError } from './spool';

/**
 * The recorder over a fake service (a fetch that answers or fails as each test needs): what a restart
 * sends, the spool's bound and lock, and spilled events read back in order. test/client-recorder*.e2e-spec.ts
 * run it against the real service.
 */
interface Sent {
  key: string;
  events: { actor: string; action: string; context: { n: number } }[];
}

function fakeService(answer: (sent: Sent) => 'ok' | 'down') {
  const sent: Sent[] = [];
  let position = 0;
  const fetch: typeof globalThis.fetch = (_url, init) => {
    const body = JSON.parse(init?.body as string) as { events: Sent['events'] };
    const key = (init?.headers as Record<string, string>)['Idempotency-Key']!;
    const request = { key, events: body.events };
    sent.push(request);
    if (answer(request) === 'down') return Promise.reject(new TypeError('fetch failed: connect ECONNREFUSED'));
    const data = body.events.map((e) => ({
      ...e,
      id: `evt_${++position}`,
      chain: { id: 'chn_x', name: 'default', position },
      hash: '0'.repeat(64),
    }));
    return Promise.resolve(new Response(JSON.stringify({ data }), { status: 201 }));
  };
  return { sent, http: new Http({ baseUrl: 'http://fake', apiKey: 'k', fetch }) };
}

const event = (n: number) => ({ actor: 'a', action: 'x.y', context: { n } });
const fast = { lingerMs: 5, backoff: { baseMs: 1, capMs: 5 } };

describe('the recorder', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'recorder-spec-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('after a restart, sends the batch it had formed again with the same key and bytes, then the rest', async () => {
    const down = fakeService(() => 'down');
    const first = new Recorder(down.http, { ...fast, spoolDir: dir, maxBatchEvents: 3 });
    for (let n = 0; n < 5; n++) await first.record(event(n));
    while (down.sent.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    await first.close({ timeoutMs: 10 });
    const firstKey = down.sent[0]!.key;
    expect(new Set(down.sent.map((s) => s.key))).toEqual(new Set([firstKey]));

    const up = fakeService(() => 'ok');
    const second = new Recorder(up.http, { ...fast, spoolDir: dir, maxBatchEvents: 3 });
    await second.ready();
    await second.flush();
    await second.close();
    // The live batch first, with its key and events; then the rest under new keys; each event once, in order.
    expect(up.sent[0]).toEqual(down.sent[0]);
    expect(up.sent.slice(1).every((s) => s.key !== firstKey)).toBe(true);
    expect(up.sent.flatMap((s) => s.events.map((e) => e.context.n))).toEqual([0, 1, 2, 3, 4]);

    const third = fakeService(() => 'ok');
    const again = new Recorder(third.http, { ...fast, spoolDir: dir });
    await again.ready();
    await again.flush();
    await again.close();
    expect(third.sent).toEqual([]);
  });

  it('flushes after a restart that leaves only a live batch to send', async () => {
    const down = fakeService(() => 'down');
    const first = new Recorder(down.http, { ...fast, spoolDir: dir });
    await Promise.all([0, 1, 2].map((n) => first.record(event(n))));
    while (down.sent.length < 1) await new Promise((resolve) => setTimeout(resolve, 5));
    await first.close({ timeoutMs: 10 });
    const up = fakeService(() => 'ok');
    const second = new Recorder(up.http, { ...fast, spoolDir: dir });
    await second.flush();
    await second.close();
    expect(up.sent).toEqual([down.sent[0]]);
  });

  it('loses nothing across several restarts while the service stays down', async () => {
    const down = fakeService(() => 'down');
    const first = new Recorder(down.http, { ...fast, spoolDir: dir, maxBatchEvents: 2 });
    for (let n = 0; n < 5; n++) await first.record(event(n));
    await first.close({ timeoutMs: 20 });
    for (let restart = 0; restart < 2; restart++) {
      const again = new Recorder(down.http, { ...fast, spoolDir: dir, maxBatchEvents: 2 });
      await again.ready();
      await again.record(event(5 + restart));
      await again.close({ timeoutMs: 20 });
    }
    const up = fakeService(() => 'ok');
    const last = new Recorder(up.http, { ...fast, spoolDir: dir, maxBatchEvents: 2 });
    await last.flush();
    await last.close();
    expect(up.sent.flatMap((s) => s.events.map((e) => e.context.n))).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('refuses an event once the spool is at its bound, and loses none it took', async () => {
    const down = fakeService(() => 'down');
    const recorder = new Recorder(down.http, { ...fast, spoolDir: dir, maxSpoolBytes: 4096 });
    let taken = 0;
    let refusal: unknown = null;
    for (let n = 0; n < 200 && refusal === null; n++) {
      await recorder.record(event(n)).then(
        () => taken++,
        (error: unknown) => (refusal = error),
      );
    }
    expect(refusal).toBeInstanceOf(SpoolFullError);
    expect(String(refusal)).toMatch(/maxSpoolBytes/);
    await recorder.close({ timeoutMs: 10 });
    const up = fakeService(() => 'ok');
    const restarted = new Recorder(up.http, { ...fast, spoolDir: dir });
    await restarted.flush();
    await restarted.close();
    expect(up.sent.flatMap((s) => s.events.map((e) => e.context.n))).toEqual(
      Array.from({ length: taken }, (_, n) => n),
    );
  });

  it('lets one process hold a spool at a time', async () => {
    const { http } = fakeService(() => 'ok');
    const { spawnSync } = await import('node:child_process');
    // A lock naming a live process that is not this one (the parent of this test's process).
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, 'lock'), String(process.ppid));
    const recorder = new Recorder(http, { spoolDir: dir });
    await expect(recorder.ready()).rejects.toBeInstanceOf(SpoolLockedError);
    await recorder.close();
    // A lock left by a process that died (kill -9) is taken over.
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' }).stdout.trim();
    writeFileSync(join(dir, 'lock'), dead);
    const next = new Recorder(http, { spoolDir: dir });
    await expect(next.ready()).resolves.toBeUndefined();
    await next.close();
  });

  it('spills to the spool when memory is full, and reads the spilled events back in order', async () => {
    let up = false;
    const service = fakeService(() => (up ? 'ok' : 'down'));
    const recorder = new Recorder(service.http, {
      ...fast,
      spoolDir: dir,
      whenFull: 'spill',
      maxQueueBytes: 600,
      maxBatchEvents: 4,
    });
    for (let n = 0; n < 60; n++) await recorder.record(event(n));
    expect(recorder.counters.spilled).toBeGreaterThan(40);
    up = true;
    await recorder.flush();
    await recorder.close();
    const delivered = service.sent.filter((s, i, all) => all.findIndex((o) => o.key === s.key) === i);
    expect(delivered.flatMap((s) => s.events.map((e) => e.context.n))).toEqual(Array.from({ length: 60 }, (_, n) => n));
    expect(recorder.counters).toMatchObject({ sent: 60, rejected: 0 });
    expect(readdirSync(dir).filter((f) => f.endsWith('.log'))).toHaveLength(1);
  });

  it('waits for room under block, and never spills without a spool', async () => {
    expect(() => new Recorder(fakeService(() => 'ok').http, { whenFull: 'spill' })).toThrow(/needs a spoolDir/);
    let up = false;
    const service = fakeService(() => (up ? 'ok' : 'down'));
    const recorder = new Recorder(service.http, { ...fast, maxQueueBytes: 200, maxBatchEvents: 2 });
    const records = Array.from({ length: 12 }, (_, n) => recorder.record(event(n)));
    let settled = 0;
    records.forEach((r) => void r.then(() => settled++));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(settled).toBeLessThan(12);
    up = true;
    await Promise.all(records);
    await recorder.flush();
    await recorder.close();
    expect(recorder.counters).toMatchObject({ sent: 12, spilled: 0 });
  });
});
