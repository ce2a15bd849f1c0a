import { RetentionLog1765000000000 } from '@app/database/migrations/1765000000000-retention-log';
import { BinaryHashes1765300000000 } from '@app/database/migrations/1765300000000-binary-hashes';
import { ChainPositionLookups1765700000000 } from '@app/database/migrations/1765700000000-chain-position-lookups';
import { attemptSql } from './support/raw-sql';
import { ADMIN_KEYS, adminBootstrapKeys } from './support/admin-keys';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';
import { appendAgedChain, chainStatus, chainVerification } from './support/chain-requests';
import { BinaryIds1765900000000 } from '@app/database/migrations/1765900000000-binary-ids';
import { ActionSchemas1766200000000 } from '@app/database/migrations/1766200000000-action-schemas';

const DAY = 86_400;
const HOUR = 3_600;

/**
 * docs/contract.md §14 after issue 26: an operator manages every account's chains; a hold an operator placed
 * is lifted only by an operator; `_audit` never keeps less than AUDIT_MIN_RETENTION_DAYS; a hold
 * lifted less than HOLD_RELEASE_DELAY_HOURS ago stops every prune; the database logs every
 * setting change and prune itself, and whole-chain verification reports a first position that
 * log does not explain, or a prune that relied on a forged checkpoint row.
 */
describe('Retention: who may lift a hold, the _audit floor, and the database’s own record', () => {
  let t: TestApp;
  let acme: string;
  let globex: string;

  beforeAll(async () => {
    t = await startTestApp({ retentionSweepSeconds: 0, bootstrapKeys: adminBootstrapKeys() });
    acme = await accountOf(KEYS.acme);
    globex = await accountOf(KEYS.globex);
  });
  afterAll(async () => {
    await t.close();
  });

  const accountOf = async (key: string): Promise<string> =>
    (
      (
        await t
          .http()
          .get('/v1/me')
          .set(...bearer(key))
          .expect(200)
      ).body as { data: { accountId: string } }
    ).data.accountId;
  const put = (key: string, path: string, body: object) =>
    t
      .http()
      .put(path)
      .set(...bearer(key))
      .send(body);
  const status = (chainId: string, key: string = KEYS.acme) => chainStatus(t, chainId, key);
  const verify = (chainId: string, key: string = KEYS.acme) => chainVerification(t, chainId, key);

  /** Appends `count` events to a new chain, stamped `ageSeconds` ago (the service's clock, Date.now, set back). */
  const chainOf = (name: string, count: number, ageSeconds = 0, key: string = KEYS.acme) =>
    appendAgedChain(t, key, { name, count, ageSeconds });

  const auditChainOf = async (accountId: string): Promise<string> =>
    (
      await t.dataSource.query<
        {
          id: string;
        }[]
      >(
        `SELECT audit_uuid_ulid('chn', id) AS id FROM chains WHERE account_id = audit_ulid_uuid($1) AND name = '_audit'`,
        [accountId],
      )
    )[0]!.id;

  const logOf = async (where: string, params: unknown[]) =>
    await t.dataSource.query<Record<string, unknown>[]>(
      `SELECT kind, audit_uuid_ulid('acc', account_id) AS account_id, audit_uuid_ulid('chn', chain_id) AS chain_id, retention_days, legal_hold_by, first_position::int AS first, last_position::int AS last,
              checkpoint_size::int AS checkpoint
         FROM retention_log WHERE ${where} ORDER BY id`,
      params,
    );

  /** audit_prune_chain called as the superuser session of the tests (the owner's: it may shift the clock). */
  const prune = (chainId: string, upTo: number, offsetSeconds: number) =>
    attemptSql(t.dataSource, (m) =>
      m.query(`SELECT audit_prune_chain(audit_ulid_uuid($1)::text, $2, 100, $3)`, [chainId, upTo, offsetSeconds]),
    );

  it('an operator sets retention and legal hold of another account’s chain; its _audit entries go to that account', async () => {
    const chainId = await chainOf('operated', 2);
    const retention = await put(ADMIN_KEYS.operator, `/v1/chain/${chainId}/retention`, { days: 30 }).expect(200);
    expect(retention.body.data).toMatchObject({ id: chainId, retentionDays: 30, effectiveRetentionDays: 30 });
    const held = await put(ADMIN_KEYS.operator, `/v1/chain/${chainId}/legal-hold`, { hold: true, reason: 'subpoena' });
    expect(held.status).toBe(200);
    expect(held.body.data).toMatchObject({
      id: chainId,
      legalHold: true,
      legalHoldBy: 'operator',
      effectiveLegalHold: true,
    });
    // An admin of another account, and an unknown chain, are still 404.
    await put(ADMIN_KEYS.globexAdmin, `/v1/chain/${chainId}/retention`, { days: 1 }).expect(404);
    await put(ADMIN_KEYS.operator, `/v1/chain/chn_01KAR2Y6T0F5M3Q8W9Z1B4C7D2/retention`, { days: 1 }).expect(404);
    const entries = await t.dataSource.query<{ action: string; context: unknown }[]>(
      `SELECT e.action, e.resource, e.context FROM events e JOIN chains c ON c.id = e.chain_id
        WHERE c.account_id = audit_ulid_uuid($1) AND c.name = '_audit' AND e.resource = $2 ORDER BY e.position`,
      [acme, chainId],
    );
    expect(entries).toEqual([
      { action: 'retention.changed', resource: chainId, context: { days: 30 } },
      { action: 'legal_hold.changed', resource: chainId, context: { hold: true, reason: 'subpoena' } },
    ]);
    await put(ADMIN_KEYS.operator, `/v1/chain/${chainId}/legal-hold`, { hold: false }).expect(200);
  });

  it('an operator’s hold is lifted (or changed) only by an operator: 403 for an admin; reason null is accepted', async () => {
    const chainId = await chainOf('held-by-operator', 1);
    await put(ADMIN_KEYS.operator, `/v1/chain/${chainId}/legal-hold`, { hold: true, reason: 'regulator' }).expect(200);
    const refused = await put(ADMIN_KEYS.acmeAdmin, `/v1/chain/${chainId}/legal-hold`, { hold: false, reason: null });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'FORBIDDEN', details: { legalHoldBy: 'operator' } });
    await put(ADMIN_KEYS.acmeAdmin, `/v1/chain/${chainId}/legal-hold`, { hold: true, reason: 'mine now' }).expect(403);
    expect(await status(chainId)).toMatchObject({ legalHold: true, legalHoldBy: 'operator' });
    const lifted = await put(ADMIN_KEYS.operator, `/v1/chain/${chainId}/legal-hold`, { hold: false, reason: null });
    expect(lifted.status).toBe(200);
    expect(lifted.body.data).toMatchObject({ legalHold: false, legalHoldBy: null });
    // An admin's own hold: the admin lifts it, with reason null too.
    await put(ADMIN_KEYS.acmeAdmin, `/v1/chain/${chainId}/legal-hold`, { hold: true, reason: 'audit' }).expect(200);
    expect(await status(chainId)).toMatchObject({ legalHold: true, legalHoldBy: 'admin' });
    await put(ADMIN_KEYS.acmeAdmin, `/v1/chain/${chainId}/legal-hold`, { hold: false, reason: null }).expect(200);
    // Holding still needs a reason.
    const noReason = await put(ADMIN_KEYS.acmeAdmin, `/v1/chain/${chainId}/legal-hold`, { hold: true, reason: null });
    expect(noReason.status).toBe(400);
    expect(noReason.body.error.details.fields[0].field).toBe('reason');
  });

  it('issue 26 item 6: an admin can neither lift an operator’s account hold nor shorten _audit below the floor; the sweep keeps _audit', async () => {
    const held = await put(ADMIN_KEYS.operator, `/v1/accounts/${globex}/legal-hold`, { hold: true, reason: 'case 9' });
    expect(held.status).toBe(200);
    expect(held.body.data).toMatchObject({ id: globex, legalHold: true, legalHoldBy: 'operator' });
    const refused = await put(ADMIN_KEYS.globexAdmin, `/v1/accounts/${globex}/legal-hold`, { hold: false });
    expect(refused.status).toBe(403);
    const audit = await auditChainOf(globex);
    for (const days of [1, 364]) {
      const res = await put(ADMIN_KEYS.globexAdmin, `/v1/chain/${audit}/retention`, { days }).expect(400);
      expect(res.body.error.details.fields[0]).toMatchObject({
        field: 'days',
        message: expect.stringMatching(/at least 365/),
      });
    }
    await put(ADMIN_KEYS.globexAdmin, `/v1/chain/${audit}/retention`, { days: 365 }).expect(200);
    await put(ADMIN_KEYS.globexAdmin, `/v1/chain/${audit}/retention`, { days: null }).expect(200);
    // The account's default of 1 day applies to _audit as the minimum.
    await put(ADMIN_KEYS.globexAdmin, `/v1/accounts/${globex}/retention`, { days: 1 }).expect(200);
    const other = await chainOf('other', 2, 0, KEYS.globex);
    expect(await status(audit, KEYS.globex)).toMatchObject({ retentionDays: null, effectiveRetentionDays: 365 });
    expect(await status(other, KEYS.globex)).toMatchObject({ effectiveRetentionDays: 1 });
    // The operator lifts its hold; two days later (and past the hold's release delay) the sweep
    // prunes the other chain, not _audit, whose every entry stays.
    await put(ADMIN_KEYS.operator, `/v1/accounts/${globex}/legal-hold`, { hold: false }).expect(200);
    t.config.retentionClockOffsetSeconds = 2 * DAY;
    try {
      await t
        .http()
        .post('/v1/retention/sweep')
        .set(...bearer(ADMIN_KEYS.operator))
        .expect(200);
    } finally {
      t.config.retentionClockOffsetSeconds = 0;
    }
    expect((await status(other, KEYS.globex)).firstPosition).toBe(3);
    expect((await status(audit, KEYS.globex)).firstPosition).toBe(1);
    // Even called directly, the prune function keeps _audit for 365 days: an event of today is kept 364 days on.
    expect(await prune(audit, 1_000_000, 364 * DAY)).toBeNull();
    expect((await status(audit, KEYS.globex)).firstPosition).toBe(1);
    const actions = await t.dataSource.query<
      {
        action: string;
      }[]
    >(`SELECT action FROM events WHERE chain_id = audit_ulid_uuid($1) ORDER BY position`, [audit]);
    expect(actions.map((a) => a.action)).toEqual(
      expect.arrayContaining(['legal_hold.changed', 'retention.changed', 'retention.pruned']),
    );
    await put(ADMIN_KEYS.globexAdmin, `/v1/accounts/${globex}/retention`, { days: null }).expect(200);
  });

  it('a hold lifted less than HOLD_RELEASE_DELAY_HOURS ago stops every prune; the database logs the changes and the prune', async () => {
    const chainId = await chainOf('lifted', 6, 3 * DAY);
    await t
      .http()
      .get(`/v1/chain/${chainId}/checkpoint`)
      .set(...bearer(KEYS.acme))
      .expect(200);
    await put(ADMIN_KEYS.acmeAdmin, `/v1/chain/${chainId}/legal-hold`, { hold: true, reason: 'keep' }).expect(200);
    await put(ADMIN_KEYS.acmeAdmin, `/v1/chain/${chainId}/retention`, { days: 1 }).expect(200);
    await put(ADMIN_KEYS.acmeAdmin, `/v1/chain/${chainId}/legal-hold`, { hold: false }).expect(200);
    // The events are three days old; the hold was lifted a moment ago: neither the sweep nor the function prunes.
    await t
      .http()
      .post('/v1/retention/sweep')
      .set(...bearer(ADMIN_KEYS.operator))
      .expect(200);
    expect((await status(chainId)).firstPosition).toBe(1);
    expect((await prune(chainId, 4, 0))?.message).toMatch(/lifted less than 24:00:00 ago/);
    expect((await prune(chainId, 4, 23 * HOUR))?.message).toMatch(/lifted less than/);
    // Nor can the policy be gone around by moving the first position directly.
    const direct = await attemptSql(t.dataSource, (m) =>
      m.query(
        `UPDATE chains c SET first_position = 5, pruned_hash = e.hash, pruned_timestamp = e."timestamp"
           FROM events e WHERE c.id = audit_ulid_uuid($1) AND e.chain_id = c.id AND e.position = 4`,
        [chainId],
      ),
    );
    expect(direct?.message).toMatch(/lifted less than/);
    // A day later on the sweep's clock it goes, and the log says so.
    expect(await prune(chainId, 4, 25 * HOUR)).toBeNull();
    expect((await status(chainId)).firstPosition).toBe(5);
    expect(await logOf('chain_id = audit_ulid_uuid($1)', [chainId])).toEqual([
      expect.objectContaining({ kind: 'hold.placed', legal_hold_by: 'admin' }),
      expect.objectContaining({ kind: 'retention', retention_days: 1 }),
      expect.objectContaining({ kind: 'hold.lifted', legal_hold_by: 'admin' }),
      expect.objectContaining({ kind: 'pruned', first: 1, last: 4, checkpoint: 6 }),
    ]);
    expect((await verify(chainId)).valid).toBe(true);
    // The log is append-only for every role, its owner's included.
    for (const sql of [
      `UPDATE retention_log SET kind = 'retention'`,
      `DELETE FROM retention_log`,
      `TRUNCATE retention_log`,
    ])
      expect((await attemptSql(t.dataSource, (m) => m.query(sql)))?.message).toMatch(/append-only/);
  });

  it('whole-chain verification reports a first position no recorded prune explains, naming the positions', async () => {
    const chainId = await chainOf('unlogged', 6, 3 * DAY);
    await t
      .http()
      .get(`/v1/chain/${chainId}/checkpoint`)
      .set(...bearer(KEYS.acme))
      .expect(200);
    await put(ADMIN_KEYS.acmeAdmin, `/v1/chain/${chainId}/retention`, { days: 1 }).expect(200);
    // A database administrator prunes with the log's trigger switched off.
    const error = await attemptSql(t.dataSource, async (m) => {
      await m.query(`ALTER TABLE chains DISABLE TRIGGER trg_chains_retention_log`);
      await m.query(`SELECT audit_prune_chain(audit_ulid_uuid($1)::text, 4, 100, 0)`, [chainId]);
      await m.query(`ALTER TABLE chains ENABLE ALWAYS TRIGGER trg_chains_retention_log`);
    });
    expect(error).toBeNull();
    expect((await status(chainId)).firstPosition).toBe(5);
    const result = await verify(chainId);
    expect(result.valid).toBe(false);
    expect(result.errors).toEqual([
      {
        position: 1,
        eventId: null,
        message: expect.stringMatching(
          /^the chain starts after positions 1–4, but the database's retention log records no prune of them/,
        ),
      },
    ]);
  });

  it('a prune that relied on a forged checkpoint row is logged and reported by verification', async () => {
    const chainId = await chainOf('forged', 6, 3 * DAY);
    await put(ADMIN_KEYS.acmeAdmin, `/v1/chain/${chainId}/retention`, { days: 1 }).expect(200);
    expect(await prune(chainId, 5, 0)).toBeNull(); // no checkpoint: nothing goes
    expect((await status(chainId)).firstPosition).toBe(1);
    // Anyone who may insert checkpoints (the service's role may) can write a row; not its signature.
    await t.dataSource.query(
      `INSERT INTO checkpoints (chain_id, size, hash, key_id, note) VALUES (audit_ulid_uuid($1), 5, decode(repeat('ab', 32), 'hex'), '00000000', 'forged')`,
      [chainId],
    );
    expect(await prune(chainId, 5, 0)).toBeNull();
    expect((await status(chainId)).firstPosition).toBe(6);
    expect(await logOf(`chain_id = audit_ulid_uuid($1) AND kind = 'pruned'`, [chainId])).toEqual([
      expect.objectContaining({ first: 1, last: 5, checkpoint: 5 }),
    ]);
    const result = await verify(chainId);
    expect(result.valid).toBe(false);
    expect(result.errors.map((e) => e.message)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^the prune of positions 1–5 relied on a stored checkpoint of size 5 that is not validly signed/,
        ),
      ]),
    );
  });

  it('upgrading: holds placed before the migration count as an operator’s, and earlier prunes are recorded', async () => {
    const chainId = await chainOf('before-upgrade', 6, 3 * DAY);
    await t
      .http()
      .get(`/v1/chain/${chainId}/checkpoint`)
      .set(...bearer(KEYS.acme))
      .expect(200);
    await put(ADMIN_KEYS.acmeAdmin, `/v1/chain/${chainId}/retention`, { days: 1 }).expect(200);
    expect(await prune(chainId, 3, 0)).toBeNull();
    const held = await chainOf('held-before-upgrade', 1);
    await put(ADMIN_KEYS.acmeAdmin, `/v1/chain/${held}/legal-hold`, { hold: true, reason: 'old hold' }).expect(200);
    const runner = t.dataSource.createQueryRunner();
    try {
      await runner.startTransaction();
      // Its functions read the hashes as the hex text they were then: 1765300000000 undone around it
      // (and 1765700000000, which replaces a function 1765300000000 restores), and the ids as the text
      // they were then (1765900000000).
      // (And 1766200000000, whose action schemas refer to the accounts' binary ids.)
      await new ActionSchemas1766200000000().down(runner);
      await new BinaryIds1765900000000().down(runner);
      await new ChainPositionLookups1765700000000().down(runner);
      await new BinaryHashes1765300000000().down(runner);
      await new RetentionLog1765000000000().down(runner);
      await new RetentionLog1765000000000().up(runner);
      await new BinaryHashes1765300000000().up(runner);
      await new ChainPositionLookups1765700000000().up(runner);
      await new BinaryIds1765900000000().up(runner);
      await new ActionSchemas1766200000000().up(runner);
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
    expect(await status(held)).toMatchObject({ legalHold: true, legalHoldBy: 'operator' });
    await put(ADMIN_KEYS.acmeAdmin, `/v1/chain/${held}/legal-hold`, { hold: false }).expect(403);
    expect(await logOf(`chain_id = audit_ulid_uuid($1)`, [chainId])).toEqual([
      expect.objectContaining({ kind: 'pruned', first: 1, last: 3, checkpoint: 6 }),
    ]);
    expect((await verify(chainId)).valid).toBe(true);
    await put(ADMIN_KEYS.operator, `/v1/chain/${held}/legal-hold`, { hold: false }).expect(200);
  });
});
