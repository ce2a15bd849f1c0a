import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { setUpServiceRole } from '@app/database';
import { ADMIN_KEYS, adminBootstrapKeys } from './support/admin-keys';
import { withAdmin } from './support/postgres';
import { bearer, freshDatabase, KEYS, startTestApp, TestApp, usingPostgres } from './support/test-app';
import { appendAgedChain, chainStatus, chainVerification } from './support/chain-requests';

const DAY = 86_400;

/** The grants compose's migrate service applies (docs/verification.md §7 and §9 point to the file). */
const SCRIPT = readFileSync(join(__dirname, '../libs/database/sql/least-privilege.sql'), 'utf8');

/*
 * Issue 26's attacks on retention, replayed as the service's least-privilege role (least-privilege.sql,
 * set up as compose does; PostgreSQL: PGlite has no roles), with its own
 * connection: lifting a hold, shortening the retention and pruning in one transaction is refused;
 * a prune on the strength of a forged checkpoint row goes (the database cannot check a signature)
 * but is logged under the role's name and reported by verification.
 */
(usingPostgres() ? describe : describe.skip)('retention attacks by the least-privilege role', () => {
  let owner: TestApp;
  let t: TestApp;
  let role: string;
  let roleUrl: string;
  let acme: string;
  let globex: string;

  beforeAll(async () => {
    const database = await freshDatabase();
    owner = await startTestApp({ retentionSweepSeconds: 0, bootstrapKeys: [] }, database);
    role = `audit_svc_${randomBytes(4).toString('hex')}`;
    const password = randomBytes(18).toString('base64url');
    const ownerClient = new Client({ connectionString: database.url! });
    await ownerClient.connect();
    await setUpServiceRole(ownerClient, { role, password, script: SCRIPT }).finally(() => ownerClient.end());
    const url = new URL(database.url!);
    url.username = role;
    url.password = password;
    roleUrl = url.toString();
    t = await startTestApp(
      {
        retentionSweepSeconds: 0,
        bootstrapKeys: adminBootstrapKeys(),
        databaseUrl: roleUrl,
        databaseMigrations: 'check',
      },
      { url: roleUrl, dataDir: database.dataDir },
    );
    const me = async (key: string) =>
      (
        (
          await t
            .http()
            .get('/v1/me')
            .set(...bearer(key))
            .expect(200)
        ).body as { data: { accountId: string } }
      ).data.accountId;
    acme = await me(KEYS.acme);
    globex = await me(KEYS.globex);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await owner?.dataSource.query(`DROP OWNED BY ${role}`).catch(() => undefined);
    await owner?.close();
    await withAdmin((admin) => admin.query(`DROP ROLE IF EXISTS "${role}"`)).catch(() => undefined);
  });

  /** Runs `work` on a connection of the role itself, as a compromised service would. */
  async function asRole<T>(work: (client: Client) => Promise<T>): Promise<T> {
    const client = new Client({ connectionString: roleUrl });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  }
  const refusal = (client: Client, sql: string, params: unknown[] = []) =>
    client.query(sql, params).then(
      () => null,
      (error: Error) => error.message,
    );

  /** `count` events in a new chain, stamped `ageSeconds` ago (the service's clock set back). */
  const chainOf = (key: string, name: string, count: number, ageSeconds: number) =>
    appendAgedChain(t, key, { name, count, ageSeconds });
  const status = (chainId: string, key: string) => chainStatus(t, chainId, key);
  const verify = (chainId: string, key: string) => chainVerification(t, chainId, key);

  it('the role cannot write the retention log or the policy, nor move a first position', async () => {
    await asRole(async (client) => {
      expect(
        await refusal(
          client,
          `INSERT INTO retention_log (logged_at, kind, database_role) VALUES (now(), 'pruned', 'x')`,
        ),
      ).toMatch(/permission denied/);
      expect(await refusal(client, `UPDATE retention_policy SET hold_release_delay_hours = 0`)).toMatch(
        /permission denied/,
      );
      expect(await refusal(client, `DELETE FROM retention_log`)).toMatch(/permission denied/);
      expect(await refusal(client, `UPDATE chains SET first_position = 2`)).toMatch(/permission denied/);
      expect(await refusal(client, `SELECT audit_prune_chain('chn_x', 1, 1, 3600)`)).toMatch(
        /only the owner's role may shift the clock/,
      );
    });
  });

  it('issue 26 item 5: lift the account’s hold, retention 1 day, prune, restore, in one transaction: refused, nothing deleted', async () => {
    const chainId = await chainOf(KEYS.acme, 'evidence', 6, 3 * DAY);
    await t
      .http()
      .get(`/v1/chain/${chainId}/checkpoint`)
      .set(...bearer(KEYS.acme))
      .expect(200);
    await t
      .http()
      .put(`/v1/accounts/${acme}/legal-hold`)
      .set(...bearer(ADMIN_KEYS.operator))
      .send({ hold: true, reason: 'litigation' })
      .expect(200);
    const error = await asRole(async (client) => {
      await client.query('BEGIN');
      await client.query(
        `UPDATE accounts SET legal_hold = false, legal_hold_reason = null, legal_hold_by = null WHERE id = audit_ulid_uuid($1)`,
        [acme],
      );
      await client.query(`UPDATE chains SET retention_days = 1 WHERE id = audit_ulid_uuid($1)`, [chainId]);
      const refused = await refusal(client, `SELECT audit_prune_chain(audit_ulid_uuid($1)::text, 5, 100, 0)`, [
        chainId,
      ]);
      await client.query('ROLLBACK');
      return refused;
    });
    expect(error).toMatch(/was lifted less than 24:00:00 ago/);
    expect(await status(chainId, KEYS.acme)).toMatchObject({ firstPosition: 1, effectiveLegalHold: true });
    expect((await verify(chainId, KEYS.acme)).valid).toBe(true);

    // Committed step by step instead: still refused, and the database logged the lift under the role's name.
    await asRole(async (client) => {
      await client.query(
        `UPDATE accounts SET legal_hold = false, legal_hold_reason = null, legal_hold_by = null WHERE id = audit_ulid_uuid($1)`,
        [acme],
      );
      await client.query(`UPDATE chains SET retention_days = 1 WHERE id = audit_ulid_uuid($1)`, [chainId]);
      expect(
        await refusal(client, `SELECT audit_prune_chain(audit_ulid_uuid($1)::text, 5, 100, 0)`, [chainId]),
      ).toMatch(/lifted less than/);
      await client.query(
        `UPDATE accounts SET legal_hold = true, legal_hold_reason = 'litigation', legal_hold_by = 'operator' WHERE id = audit_ulid_uuid($1)`,
        [acme],
      );
      await client.query(`UPDATE chains SET retention_days = null WHERE id = audit_ulid_uuid($1)`, [chainId]);
    });
    expect(await status(chainId, KEYS.acme)).toMatchObject({ firstPosition: 1, effectiveLegalHold: true });
    const log = await owner.dataSource.query<{ kind: string; chain_id: string | null; database_role: string }[]>(
      `SELECT kind, audit_uuid_ulid('chn', chain_id) AS chain_id, database_role FROM retention_log WHERE (account_id = audit_ulid_uuid($1) AND chain_id IS NULL) OR chain_id = audit_ulid_uuid($2) ORDER BY id`,
      [acme, chainId],
    );
    expect(log.slice(-5)).toEqual([
      { kind: 'hold.placed', chain_id: null, database_role: role },
      { kind: 'hold.lifted', chain_id: null, database_role: role },
      { kind: 'retention', chain_id: chainId, database_role: role },
      { kind: 'hold.placed', chain_id: null, database_role: role },
      { kind: 'retention', chain_id: chainId, database_role: role },
    ]);
  });

  it('issue 26 item 5, a forged checkpoint row: the prune is logged under the role’s name and verification reports it', async () => {
    const chainId = await chainOf(KEYS.globex, 'unsigned', 6, 3 * DAY);
    const deleted = await asRole(async (client) => {
      await client.query(
        `INSERT INTO checkpoints (chain_id, size, hash, key_id, note) VALUES (audit_ulid_uuid($1), 5, decode(repeat('ab', 32), 'hex'), '00000000', 'forged')`,
        [chainId],
      );
      await client.query(`UPDATE chains SET retention_days = 1 WHERE id = audit_ulid_uuid($1)`, [chainId]);
      return (await client.query(`SELECT audit_prune_chain(audit_ulid_uuid($1)::text, 5, 100, 0)::int AS n`, [chainId]))
        .rows[0] as {
        n: number;
      };
    });
    expect(deleted.n).toBe(5);
    const [logged] = await owner.dataSource.query<unknown[]>(
      `SELECT first_position::int AS first, last_position::int AS last, checkpoint_size::int AS checkpoint, database_role
         FROM retention_log WHERE chain_id = audit_ulid_uuid($1) AND kind = 'pruned'`,
      [chainId],
    );
    expect(logged).toEqual({ first: 1, last: 5, checkpoint: 5, database_role: role });
    const result = await verify(chainId, KEYS.globex);
    expect(result.valid).toBe(false);
    expect(result.errors.map((e) => e.message)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^the prune of positions 1–5 relied on a stored checkpoint of size 5 that is not validly signed/,
        ),
      ]),
    );
    expect(globex).toMatch(/^acc_/);
  });
});
