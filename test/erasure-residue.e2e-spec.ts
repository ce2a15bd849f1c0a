import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { ADMIN_KEYS, adminBootstrapKeys } from './support/admin-keys';
import { EMBEDDED_TEMPLATE_ENV, PGLITE_FOLDER } from './support/postgres';
import { bearer, KEYS, startTestApp, TestApp, usingPostgres } from './support/test-app';
import type { EventView } from '../apps/api/src/events/dto/event.view';

/** docs/contract.md §17: "at most 60 s" after an erasure's answer. */
const SCRUB_DEADLINE_MS = 60_000;

/** Every regular file under `dir`. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    const stat = statSync(path, { throwIfNoEntry: false });
    if (stat?.isDirectory()) return filesUnder(path);
    return stat?.isFile() ? [path] : [];
  });
}

/** `needle: file` for each needle found in the bytes of a file under `dir` (a file removed meanwhile is skipped). */
function byteSearch(dir: string, needles: Record<string, Buffer>): string[] {
  return filesUnder(dir).flatMap((file) => {
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch {
      return [];
    }
    return Object.entries(needles)
      .filter(([, needle]) => bytes.includes(needle))
      .map(([name]) => `${name}: ${relative(dir, file)}`);
  });
}

/** A DATA_DIR of its own whatever the e2e mode, the run's migrated template copied in when there is one. */
function embeddedDataDir(): string {
  const dataDir = mkdtempSync(join(tmpdir(), 'audit-residue-'));
  const template = process.env[EMBEDDED_TEMPLATE_ENV];
  if (template) cpSync(join(template, PGLITE_FOLDER), join(dataDir, PGLITE_FOLDER), { recursive: true });
  return dataDir;
}

/**
 * The events of one person, with values found nowhere else: an actor, a resource, a context member,
 * appended alone (with an Idempotency-Key) and in a batch; then the bytes that must be gone once
 * they are erased: each value, the events' salt seeds (raw and hex), the salts of the erased
 * fields (in the stored answers) and the request digest the idempotency record kept.
 */
async function appendPerson(t: TestApp): Promise<{ q: string; secrets: Record<string, Buffer> }> {
  const tag = randomBytes(6).toString('hex');
  const email = `zoe-${tag}@example.com`;
  const resource = `doc:zoe-${tag}`;
  const pin = `pin-${tag}`;
  const body = { actor: email, action: 'user.login', resource, context: { pin, ip: '198.51.100.7' }, chain: 'people' };
  const single = (
    await t
      .http()
      .post('/v1/events')
      .set(...bearer(KEYS.acme))
      .set('Idempotency-Key', `residue-${tag}`)
      .send(body)
      .expect(201)
  ).body.data as EventView;
  const batch = (
    await t
      .http()
      .post('/v1/events/batch')
      .set(...bearer(KEYS.acme))
      .send({
        events: [
          { ...body, action: 'doc.read' },
          { actor: 'someone-else@example.com', action: 'doc.read', context: { n: 1 }, chain: 'people' },
        ],
      })
      .expect(201)
  ).body.data as EventView[];
  const events = [single, batch[0]!];
  const seeds = await t.dataSource.query<{ seed: Buffer }[]>(
    `SELECT salt_seed AS seed FROM events WHERE id = ANY($1::uuid[])`,
    [await Promise.all(events.map(async (e) => uuidOf(t, e.id)))],
  );
  const [idempotency] = await t.dataSource.query<{ digest: string }[]>(
    `SELECT request_digest AS digest FROM idempotency_keys WHERE key = $1`,
    [`residue-${tag}`],
  );
  // Statistics of the events, as the retention sweep makes them (ANALYZE): a table this small has every value in them.
  await t.dataSource.query('ANALYZE events, idempotency_keys');
  const secrets: Record<string, Buffer> = {
    email: Buffer.from(email),
    resource: Buffer.from(resource),
    pin: Buffer.from(pin),
    digest: Buffer.from(idempotency!.digest),
  };
  seeds.forEach(({ seed }, i) => {
    expect(seed).toHaveLength(16);
    secrets[`seed ${i}`] = seed;
    secrets[`seed ${i} (hex)`] = Buffer.from(seed.toString('hex'));
  });
  events.forEach((e, i) => {
    const salts = e.hashing!.salts;
    secrets[`actor salt ${i}`] = Buffer.from(salts.actor!);
    secrets[`resource salt ${i}`] = Buffer.from(salts.resource!);
    secrets[`pin salt ${i}`] = Buffer.from(salts.context!.pin!);
    secrets[`ip salt ${i}`] = Buffer.from(salts.context!.ip!);
  });
  return { q: `actor:"${email}"`, secrets };
}

async function uuidOf(t: TestApp, id: string): Promise<string> {
  const [row] = await t.dataSource.query<{ id: string }[]>(`SELECT audit_ulid_uuid($1)::text AS id`, [id]);
  return row!.id;
}

const eraseAll = async (t: TestApp, q: string): Promise<void> => {
  const res = await t
    .http()
    .post('/v1/erasures')
    .set(...bearer(ADMIN_KEYS.acmeAdmin))
    .send({ q, fields: ['actor', 'resource', 'context.*'], reason: 'GDPR Art. 17' })
    .expect(200);
  expect(res.body.data.events).toBe(2);
};

/** Erased values in the database's own files (docs/contract.md §17 "The embedded default's files", threat-model P10). */
describe('nothing of an erased value remains in DATA_DIR on the embedded default', () => {
  const dataDir = embeddedDataDir();
  let t: TestApp | null = null;
  const start = async () => (t = await startTestApp({ bootstrapKeys: adminBootstrapKeys() }, { url: null, dataDir }));
  afterAll(async () => {
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('after the answer and at most 60 s: no value, seed, salt or digest in any file, and the chain still verifies', async () => {
    const app = await start();
    const { q, secrets } = await appendPerson(app);
    expect(byteSearch(dataDir, secrets)).toEqual(expect.arrayContaining([expect.stringMatching(/^email: pglite\//)]));

    await eraseAll(app, q);
    const answered = Date.now();
    let found = byteSearch(dataDir, secrets);
    while (found.length > 0 && Date.now() - answered < SCRUB_DEADLINE_MS) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      found = byteSearch(dataDir, secrets);
    }
    expect(found).toEqual([]);

    // The service goes on: appends, reads and verification after the rewrite.
    await app
      .http()
      .post('/v1/events')
      .set(...bearer(KEYS.acme))
      .send({ actor: 'after@example.com', action: 'user.login', chain: 'people' })
      .expect(201);
    const chain = (
      await app
        .http()
        .get('/v1/chains?name=people')
        .set(...bearer(KEYS.acme))
        .expect(200)
    ).body.data[0];
    const verified = await app
      .http()
      .get(`/v1/chain/${chain.id}/verify`)
      .set(...bearer(KEYS.acme))
      .expect(200);
    expect(verified.body.data).toMatchObject({ valid: true, errors: [] });
  }, 120_000);

  it('stopped right after the answer: the scrub is done at shutdown', async () => {
    const app = t ?? (await start());
    const { q, secrets } = await appendPerson(app);
    await eraseAll(app, q);
    await app.close();
    t = null;
    expect(byteSearch(dataDir, secrets)).toEqual([]);
    // A restart reads the database as it was left.
    const again = await start();
    await again
      .http()
      .get('/v1/events?q=action:user.login')
      .set(...bearer(KEYS.acme))
      .expect(200);
  }, 120_000);
});

(usingPostgres() ? describe : describe.skip)('on PostgreSQL, the tables an erasure changed are vacuumed', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ bootstrapKeys: adminBootstrapKeys() });
  });
  afterAll(async () => {
    await t.close();
  });

  const lastVacuums = async (): Promise<Record<string, Date | null>> => {
    const rows = await t.dataSource.query<{ name: string; at: Date | null }[]>(
      `SELECT relname AS name, last_vacuum AS at FROM pg_stat_user_tables WHERE relname IN ('events', 'idempotency_keys')`,
    );
    return Object.fromEntries(rows.map((r) => [r.name, r.at]));
  };

  it('plain VACUUM of events and idempotency_keys within 60 s of the answer', async () => {
    const { q } = await appendPerson(t);
    expect(await lastVacuums()).toEqual({ events: null, idempotency_keys: null });
    await eraseAll(t, q);
    const answered = Date.now();
    let vacuumed = await lastVacuums();
    while (Object.values(vacuumed).some((at) => at === null) && Date.now() - answered < SCRUB_DEADLINE_MS) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      vacuumed = await lastVacuums();
    }
    expect(vacuumed).toEqual({ events: expect.any(Date), idempotency_keys: expect.any(Date) });
  }, 120_000);
});
