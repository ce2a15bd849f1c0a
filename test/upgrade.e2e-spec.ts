import { chmodSync, copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { MIGRATION_LOCK } from '@app/database';
import { parseVerifierKey, verifyNote } from '@app/hashing';
import { spawnChildInstance, startChildInstance } from './support/child-instance';
import { withClient } from './support/postgres';
import { freshDatabase, usingPostgres } from './support/test-app';
import { caller, FIXTURE_API_KEYS, readEverything } from './support/upgrade-answers';

/** The release whose database the fixture holds: the last one that landed before the data layer's migrations. */
const FIXTURE = join(__dirname, 'fixtures', 'upgrade-03a986b');

/* eslint-disable @typescript-eslint/no-explicit-any -- the answers are JSON, compared as a whole */

/** The schema as the catalog says: every column, index, constraint and trigger of the public schema, and the migrations run. */
async function schemaOf(url: string): Promise<string> {
  return withClient(url, async (client) => {
    const parts = [];
    for (const text of [
      `SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
        WHERE table_schema = 'public' ORDER BY 1, 2`,
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1`,
      `SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY 1`,
      `SELECT tgname, pg_get_triggerdef(oid) AS def FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1`,
      `SELECT name FROM typeorm_migrations ORDER BY id`,
    ])
      parts.push(await client.query(text));
    return JSON.stringify(parts.map((part) => part.rows));
  });
}

/**
 * `answers` without the `verifiedAt` of each verification (the time it ran), and without the
 * `hashVersion` a chain's status has since 1765400000000 (checked apart: 1 on every chain made before).
 */
function withoutReadTimes(answers: any): any {
  return JSON.parse(
    JSON.stringify(answers, (key, value: unknown) =>
      key === 'verifiedAt' || key === 'hashVersion' ? undefined : value,
    ),
  );
}

/** Every `hashVersion` in `answers`. */
function hashVersionsIn(answers: any): unknown[] {
  const found: unknown[] = [];
  JSON.stringify(answers, (key, value: unknown) => (key === 'hashVersion' && found.push(value), value));
  return found;
}

(usingPostgres() ? describe : describe.skip)('an upgrade in place', () => {
  // Child processes through ts-node, each started up to twice: minutes on a loaded two-core machine.
  jest.setTimeout(300_000);

  it('answers 503 on /health/ready and every route (200 on /health/live) while it migrates, then serves', async () => {
    const database = await freshDatabase();
    // Holding the migration lock keeps the starting instance migrating for as long as this test likes.
    const holder = new Client({ connectionString: database.url! });
    await holder.connect();
    await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const instance = await spawnChildInstance({ DATABASE_URL: database.url!, API_KEYS: FIXTURE_API_KEYS });
    try {
      let live: Response | null = null;
      for (let i = 0; i < 900 && live === null; i++) {
        live = await fetch(`${instance.url}/health/live`).catch(() => null);
        if (live === null) await new Promise((r) => setTimeout(r, 100));
      }
      expect(live?.status).toBe(200);
      expect(await live!.json()).toEqual({ data: { status: 'ok' } });
      for (const [path, init] of [
        ['/health/ready', {}],
        ['/v1/events', { headers: { Authorization: 'Bearer x', 'X-Request-Id': 'upgrade-probe-1' } }],
        ['/v1/events', { method: 'POST', body: '{"actor":"a"}', headers: { 'Content-Type': 'application/json' } }],
      ] as const) {
        const res = await fetch(`${instance.url}${path}`, init);
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toBe('5');
        expect(res.headers.get('content-type')).toContain('application/json');
        const body = (await res.json()) as { error: { code: string; message: string; details: object } };
        expect(body.error.code).toBe('SERVICE_UNAVAILABLE');
        expect(body.error.message).toMatch(/starting/);
        if ('headers' in init && 'X-Request-Id' in init.headers)
          expect(res.headers.get('x-request-id')).toBe('upgrade-probe-1');
      }
      expect(instance.exited()).toBe(false);
      await holder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      let ready = 0;
      for (let i = 0; i < 600 && ready !== 200; i++) {
        ready = await fetch(`${instance.url}/health/ready`).then(
          (r) => r.status,
          () => 0,
        );
        if (ready !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      expect(ready).toBe(200);
      // Now the application itself answers: a key is required.
      expect((await fetch(`${instance.url}/v1/events`)).status).toBe(401);
    } finally {
      await instance.stop();
      await holder.end();
    }
  });

  it('migrates a database the previous release wrote: the same answers, signatures that verify, appends that continue, a second start that changes nothing', async () => {
    const database = await freshDatabase();
    const url = database.url!;
    const dump = readFileSync(join(FIXTURE, 'dump.sql'), 'utf8')
      .split('\n')
      .filter((line) => !line.startsWith('\\')) // psql's \restrict / \unrestrict
      .join('\n');
    await withClient(url, async (client) => {
      await client.query(dump);
      // The fixture's idempotency records were claimed the day it was made; their age is part of the set-up,
      // not of the day the test runs: an hour old, well inside IDEMPOTENCY_RETENTION_HOURS, so the retry below
      // is answered from its record on any date (they expire after 24 hours, and the sweep at start deletes them).
      await client.query(`UPDATE public.idempotency_keys SET claimed_at = now() - interval '1 hour'`);
    });
    const before = JSON.parse(readFileSync(join(FIXTURE, 'answers.json'), 'utf8'));
    const dataDir = () => {
      const dir = mkdtempSync(join(tmpdir(), 'audit-upgrade-'));
      for (const file of ['checkpoint-signing-key', 'secrets-key']) {
        copyFileSync(join(FIXTURE, file), join(dir, file));
        chmodSync(join(dir, file), 0o600);
      }
      return dir;
    };
    const env = { DATABASE_URL: url, API_KEYS: FIXTURE_API_KEYS, STREAM_DELIVERY: 'false' };

    const first = await startChildInstance({ ...env, DATA_DIR: dataDir() });
    try {
      const call = caller(first.url);
      // Every event, chain, status, verification, checkpoint and proof reads back identically.
      // (`verifiedAt` is when a verification ran, the one thing that is not about the data.)
      const read = await readEverything(call);
      // The chains made by the release before keep hash version 1 (docs/contract.md §17).
      expect(new Set(hashVersionsIn(read))).toEqual(new Set([1]));
      const after = withoutReadTimes(read);
      const was = withoutReadTimes(before);
      for (const account of ['acme', 'globex']) {
        expect(after[account].events).toEqual(was[account].events);
        expect(after[account].chains).toEqual(was[account].chains);
        expect(after[account].proofs).toEqual(was[account].proofs);
        expect(after[account].perChain).toEqual(was[account].perChain);
      }
      // Every signature of the old checkpoints verifies with the key the service publishes now.
      const vkey = (await (await fetch(`${first.url}/v1/checkpoint-key`)).text()).trim();
      const verifier = parseVerifierKey(vkey);
      for (const account of ['acme', 'globex'])
        for (const chain of Object.values<any>(before[account].perChain))
          expect(verifyNote(chain.checkpoint, [verifier])).toMatchObject({ ok: true });
      // Appends continue each chain from its head, and each chain still verifies whole.
      for (const chain of before.acme.chains.filter((c: any) => !c.name.startsWith('_'))) {
        const { data: event } = await call('acme', 'POST', '/v1/events', {
          actor: 'after',
          action: 'upgrade.done',
          chain: chain.name,
        });
        expect(event.chain.position).toBe(chain.lastPosition + 1);
        expect(event.previousHash).toBe(chain.lastHash);
        const verify = await call('acme', 'GET', `/v1/chain/${chain.id}/verify`);
        expect(verify.data.valid).toBe(true);
      }
      // The idempotency record made before the upgrade still answers the retry with the first event.
      const retry = await call(
        'acme',
        'POST',
        '/v1/events',
        { actor: 'user:idem', action: 'order.refunded', chain: 'orders-1' },
        {
          'Idempotency-Key': 'fixture-retry-1',
        },
      );
      expect(before.acme.events.map((e: any) => e.id)).toContain(retry.data.id);
    } finally {
      await first.stop();
    }
    const migrated = await schemaOf(url);
    // A second start migrates nothing and changes nothing.
    const second = await startChildInstance({ ...env, DATA_DIR: dataDir() });
    await second.stop();
    expect(await schemaOf(url)).toBe(migrated);
  });
});
