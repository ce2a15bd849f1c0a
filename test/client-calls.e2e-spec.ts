import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditTrailClient, AuditTrailError, TailedEvent } from '@audit-trail/client';
import { ADMIN_KEYS, adminBootstrapKeys } from './support/admin-keys';
import { clientOf, listening } from './support/client-app';
import { startTestApp, TestApp } from './support/test-app';

/*
 * docs/contract.md §20: the client's typed calls against the real service: events (append, batch, get,
 * the list over every page, verify, proof, export to a file), chains (list, status, verify,
 * checkpoint, consistency), the live tail resumed with Last-Event-ID, admin routes, and errors as
 * AuditTrailError with the envelope's code and details and the answer's X-Request-Id.
 */
describe('the client’s calls (docs/contract.md §20)', () => {
  let t: TestApp;
  let client: AuditTrailClient;
  let admin: AuditTrailClient;
  const dir = mkdtempSync(join(tmpdir(), 'client-calls-'));

  beforeAll(async () => {
    t = await startTestApp({ bootstrapKeys: adminBootstrapKeys() });
    const url = await listening(t);
    client = clientOf(url);
    admin = clientOf(url, ADMIN_KEYS.acmeAdmin);
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const collect = async <T>(items: AsyncIterable<T>): Promise<T[]> => {
    const all: T[] = [];
    for await (const item of items) all.push(item);
    return all;
  };

  it('appends, reads, lists over every page, verifies and proves events', async () => {
    const one = await client.events.append({ actor: 'alice', action: 'doc.create', chain: 'calls', context: { n: 0 } });
    const batch = await client.events.appendBatch(
      [1, 2, 3, 4].map((n) => ({ actor: 'alice', action: 'doc.update', chain: 'calls', context: { n } })),
      { idempotencyKey: 'calls-batch-1' },
    );
    expect(batch.map((e) => e.chain.position)).toEqual([2, 3, 4, 5]);
    const again = await client.events.appendBatch(
      [1, 2, 3, 4].map((n) => ({ actor: 'alice', action: 'doc.update', chain: 'calls', context: { n } })),
      { idempotencyKey: 'calls-batch-1' },
    );
    expect(again.map((e) => e.id)).toEqual(batch.map((e) => e.id));
    expect(await client.events.get(one.id)).toEqual(one);
    const listed = await collect(client.events.list({ chain_id: one.chain.id, limit: 2 }));
    expect(listed.map((e) => e.chain.position)).toEqual([5, 4, 3, 2, 1]);
    expect(await client.events.verify(batch[1]!.id)).toMatchObject({ valid: true });
    expect(await client.events.proof(batch[1]!.id, 4)).toMatchObject({ position: 3, size: 4, leafIndex: 2 });
  });

  it('reads chains: list, status, whole-chain verification, checkpoint, consistency', async () => {
    const chains = await collect(client.chains.list({ name: 'calls' }));
    expect(chains).toHaveLength(1);
    const chainId = chains[0]!.id;
    expect(await client.chains.status(chainId)).toMatchObject({ id: chainId, lastPosition: 5 });
    expect(await client.chains.verify(chainId)).toMatchObject({ valid: true });
    expect((await client.chains.checkpoint(chainId)).split('\n').slice(0, 2)).toEqual([`audit-trail/${chainId}`, '5']);
    expect(await client.chains.consistency(chainId, 2, 5)).toMatchObject({ from: 2, to: 5 });
    expect(await client.transparency.checkpointKey()).toMatch(/^audit-trail\+[0-9a-f]{8}\+/);
  });

  it('exports to a file, streamed', async () => {
    const file = join(dir, 'export.json');
    const after = '2000-01-01T00:00:00.000Z';
    const before = new Date(Date.now() + 60_000).toISOString();
    await client.events.exportToFile({ format: 'json', after, before, q: 'chain:calls' }, file);
    const document = JSON.parse(readFileSync(file, 'utf8')) as { export: { count: number }; data: unknown[] };
    expect(document.export.count).toBe(5);
    expect(document.data).toHaveLength(5);
  });

  it('follows the live tail and resumes after the last event it gave (Last-Event-ID)', async () => {
    const abort = new AbortController();
    const tail = client.events.tail({ q: 'chain:tail' }, { signal: abort.signal });
    const first = tail.next();
    // The stream starts with events appended after it opens: give it a moment to.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await client.events.appendBatch(
      [1, 2, 3].map((n) => ({ actor: 'bob', action: 'tail.test', chain: 'tail', context: { n } })),
    );
    const got: TailedEvent[] = [(await first).value as TailedEvent];
    got.push((await tail.next()).value as TailedEvent);
    abort.abort();
    await tail.return(undefined);
    expect(got.map((e) => e.event.context)).toEqual([{ n: 1 }, { n: 2 }]);
    const resumed = new AbortController();
    const rest = client.events.tail({ q: 'chain:tail' }, { signal: resumed.signal, lastEventId: got[1]!.lastEventId });
    const third = await rest.next();
    resumed.abort();
    await rest.return(undefined);
    expect((third.value as TailedEvent).event.context).toEqual({ n: 3 });
  });

  it('reconnects a tail whose connection is cut, resuming with Last-Event-ID: nothing skipped or repeated', async () => {
    const resumedWith: (string | null)[] = [];
    // Every stream answer is cut after its first event, as a proxy or a network would.
    const cutting: typeof fetch = async (url, init) => {
      const res = await fetch(url, init);
      const path = new URL(url instanceof Request ? url.url : url.toString()).pathname;
      if (path !== '/v1/events/stream' || !res.body) return res;
      resumedWith.push(new Headers(init?.headers).get('last-event-id'));
      const reader = res.body.getReader();
      let text = '';
      let cut = false;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (cut) {
            await reader.cancel();
            return controller.error(new TypeError('terminated'));
          }
          for (;;) {
            const { value, done } = await reader.read();
            if (done) return controller.close();
            text += new TextDecoder().decode(value);
            const event = /event: event\n[^]*?\n\n/.exec(text);
            if (!event) continue;
            // Up to the end of the first event, and then the connection drops.
            controller.enqueue(new TextEncoder().encode(text.slice(0, event.index + event[0].length)));
            cut = true;
            return;
          }
        },
      });
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const tailing = clientOf(await listening(t), undefined, cutting);
    const abort = new AbortController();
    const tail = tailing.events.tail({ q: 'chain:cut' }, { signal: abort.signal });
    const first = tail.next();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await client.events.appendBatch(
      [1, 2, 3].map((n) => ({ actor: 'bob', action: 'tail.cut', chain: 'cut', context: { n } })),
    );
    const got = [(await first).value as TailedEvent];
    for (let i = 0; i < 2; i++) got.push((await tail.next()).value as TailedEvent);
    abort.abort();
    await tail.return(undefined);
    expect(got.map((e) => e.event.context)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(resumedWith).toEqual([null, got[0]!.lastEventId, got[1]!.lastEventId]);
  });

  it('calls the admin routes', async () => {
    const me = await admin.accounts.me();
    const made = await admin.keys.create(me.accountId, { name: 'client-test', scopes: ['read'] });
    expect((await collect(admin.keys.list(me.accountId))).map((k) => k.id)).toContain(made.id);
    expect(await admin.keys.revoke(me.accountId, made.id)).toMatchObject({ id: made.id });
    expect(await collect(admin.destinations.list(me.accountId))).toEqual([]);
  });

  it('throws AuditTrailError with the envelope’s code, details and the request id', async () => {
    const missing = await client.events.get('evt_01KAR2Y6T0F5M3Q8W9Z1B4C7D2').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(AuditTrailError);
    expect(missing).toMatchObject({ status: 404, code: 'NOT_FOUND', details: {} });
    expect((missing as AuditTrailError).requestId).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
    const bad = await client.events.page({ limit: 500 }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect((bad as AuditTrailError).fields.map((f) => f.field)).toEqual(['limit']);
    const refused = await client.keys
      .list('acc_01KAR2Y6T0F5M3Q8W9Z1B4C7D2')
      .next()
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 403, code: 'FORBIDDEN' });
  });
});
