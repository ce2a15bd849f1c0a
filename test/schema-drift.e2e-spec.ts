import { rmSync } from 'node:fs';
import { Column, DataSource, Entity, Index, PrimaryColumn } from 'typeorm';
import {
  ApiKeyEntity,
  ChainEntity,
  CheckpointEntity,
  dataSourceOptions,
  EmbeddedPostgres,
  ENTITIES,
  EventEntity,
  IdempotencyKeyEntity,
  runMigrations,
  schemaDrift,
} from '@app/database';
import { declareFunction, DECLARED_FUNCTIONS, DECLARED_TRIGGERS } from '@app/database/schema/functions';
import { trgChainsStartEmpty } from '@app/database/schema/functions/append-only';
import {
  audit_erase_events,
  audit_events_update_gate,
  audit_new_erasure_id,
  trgEventsRejectUpdate,
} from '@app/database/schema/functions/erasure';
import { audit_prune_chain } from '@app/database/schema/functions/retention';
import { freshDatabase } from './support/test-app';

// A drifted entity: an index no migration creates.
@Entity({ name: 'events' })
@Index('ix_events_account_hash', ['accountId', 'hash'])
class EventWithExtraIndex extends EventEntity {}

// A drifted entity: idempotency_keys as if someone forgot ix_idempotency_keys_claimed and the foreign key.
@Entity({ name: 'idempotency_keys' })
class IdempotencyKeyWithoutIndex {
  @PrimaryColumn({ name: 'account_id', type: 'varchar', length: 30, primaryKeyConstraintName: 'pk_idempotency_keys' })
  accountId!: string;
  @PrimaryColumn({ type: 'varchar', length: 255, primaryKeyConstraintName: 'pk_idempotency_keys' })
  key!: string;
  @Column({ name: 'request_digest', type: 'char', length: 64 })
  requestDigest!: string;
  @Column({ name: 'claimed_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  claimedAt!: Date;
  @Column({ type: 'text', nullable: true })
  response!: string | null;
}

type Entities = (new () => object)[];

/** `npm run migration:check`'s comparison, on a freshly migrated database (PostgreSQL, or PGlite with E2E_EMBEDDED=1). */
describe('schema drift (npm run migration:check)', () => {
  let database: { url: string | null; dataDir: string };

  /**
   * A data source with these entities on the suite's database, used and closed. The embedded
   * database is started for each (on the same data directory): it accepts one connection, and a
   * new one right after the last closed is not always let in.
   */
  async function withEntities<T>(entities: Entities, work: (dataSource: DataSource) => Promise<T>): Promise<T> {
    const embedded = database.url ? null : await EmbeddedPostgres.start(database.dataDir, () => undefined);
    const url = database.url ?? embedded!.url;
    try {
      const dataSource = await new DataSource({ ...dataSourceOptions({ url, poolSize: 1 }), entities }).initialize();
      try {
        return await work(dataSource);
      } finally {
        await dataSource.destroy();
      }
    } finally {
      await embedded?.stop();
    }
  }
  const driftOf = (entities: Entities) => withEntities(entities, schemaDrift);
  const replacing = (entity: (typeof ENTITIES)[number], by: new () => object): Entities =>
    ENTITIES.map((e) => (e === entity ? by : e));

  beforeAll(async () => {
    database = await freshDatabase();
    await withEntities(ENTITIES, runMigrations);
  });
  afterAll(() => rmSync(database.dataDir, { recursive: true, force: true }));

  it('finds none between the entities and the migrated schema', async () => {
    expect(await driftOf(ENTITIES)).toEqual([]);
  });

  it('finds an index an entity declares that no migration creates', async () => {
    const drift = await driftOf(replacing(EventEntity, EventWithExtraIndex));
    expect(drift).toContain('CREATE INDEX "ix_events_account_hash" ON "events" ("account_id", "hash") ;');
  });

  it('finds an index and a foreign key the migrations create that an entity leaves out', async () => {
    const drift = await driftOf(replacing(IdempotencyKeyEntity, IdempotencyKeyWithoutIndex));
    expect(drift).toEqual(
      expect.arrayContaining([
        'ALTER TABLE "idempotency_keys" DROP CONSTRAINT "fk_idempotency_keys_account";',
        'DROP INDEX "public"."ix_idempotency_keys_claimed";',
      ]),
    );
  });

  it('finds the unique constraint that stops a chain forking when the entity leaves it out', async () => {
    const drift = await withEntities(ENTITIES, async (dataSource) => {
      const events = dataSource.getMetadata(EventEntity);
      events.uniques = events.uniques.filter((unique) => unique.name !== 'uq_events_chain_position');
      return schemaDrift(dataSource);
    });
    expect(drift).toContain('ALTER TABLE "events" DROP CONSTRAINT "uq_events_chain_position";');
  });

  it('finds what the schema builder matches only by name: a check, column order, a primary key name', async () => {
    const drift = await withEntities(ENTITIES, async (dataSource) => {
      const checkpoints = dataSource.getMetadata(CheckpointEntity);
      checkpoints.checks.find((check) => check.name === 'ck_checkpoints_size')!.expression = 'size >= 1';
      const chains = dataSource.getMetadata(ChainEntity);
      chains.indices[0]!.columns.reverse();
      dataSource.getMetadata(ApiKeyEntity).primaryColumns[0]!.primaryKeyConstraintName = 'api_keys_pkey';
      return schemaDrift(dataSource);
    });
    expect(drift).toEqual([
      '-- api_keys: the entity declares api_keys_pkey PRIMARY KEY (id), the database has no such constraint or index',
      '-- api_keys: the database has pk_api_keys PRIMARY KEY (id), the entity does not declare it',
      '-- chains: the entity declares ix_chains_account_created INDEX (id, created_at, account_id), the database has INDEX (account_id, created_at, id)',
      '-- checkpoints: the entity declares ck_checkpoints_size CHECK ((size >= 1)), the database has CHECK ((size >= 0))',
    ]);
  });

  it('names each function or trigger that differs from its declaration, is missing or is not declared', async () => {
    const drift = await withEntities(ENTITIES, async (dataSource) => {
      // What the schema's owner (or a superuser) could do to open a path around the rules (threat model P2).
      await dataSource.query(
        `CREATE OR REPLACE FUNCTION audit_events_update_gate() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`,
      );
      await dataSource.query(`CREATE FUNCTION audit_backdoor() RETURNS void LANGUAGE sql AS $$ SELECT $$`);
      await dataSource.query(`DROP FUNCTION audit_new_erasure_id()`);
      await dataSource.query(`GRANT EXECUTE ON FUNCTION audit_erase_events(varchar, jsonb, jsonb) TO PUBLIC`);
      await dataSource.query(`DROP TRIGGER trg_chains_start_empty ON chains`);
      await dataSource.query(`ALTER TABLE events DISABLE TRIGGER trg_events_time_order`);
      await dataSource.query(`ALTER TABLE retention_log ENABLE TRIGGER trg_retention_log_reject_update`);
      await dataSource.query(`DROP TRIGGER trg_events_reject_update ON events`);
      await dataSource.query(
        `CREATE TRIGGER trg_events_reject_update BEFORE INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION audit_events_update_gate()`,
      );
      const found = await schemaDrift(dataSource);
      // Put back from the declarations themselves (they are what the migrations applied): no drift again.
      await dataSource.query(audit_events_update_gate.sql);
      await dataSource.query(`DROP FUNCTION audit_backdoor()`);
      await dataSource.query(audit_new_erasure_id.sql);
      await dataSource.query(`REVOKE EXECUTE ON FUNCTION audit_erase_events(varchar, jsonb, jsonb) FROM PUBLIC`);
      await dataSource.query(trgChainsStartEmpty.sql);
      await dataSource.query(`ALTER TABLE events ENABLE TRIGGER trg_events_time_order`);
      await dataSource.query(`ALTER TABLE retention_log ENABLE ALWAYS TRIGGER trg_retention_log_reject_update`);
      await dataSource.query(`DROP TRIGGER trg_events_reject_update ON events`);
      await dataSource.query(trgEventsRejectUpdate.sql);
      expect(await schemaDrift(dataSource)).toEqual([]);
      return found;
    });
    expect(drift).toEqual([
      expect.stringMatching(
        /^-- function audit_events_update_gate\(\): differs from its declaration at character \d+: the database has …".*BEGIN RETURN NULL; END/,
      ),
      '-- function audit_erase_events(p_account character varying, p_rows jsonb, p_erasure jsonb): PUBLIC may execute it, the declaration says it may not',
      '-- function audit_new_erasure_id(): declared, the database has no such function',
      '-- function audit_backdoor(): the database has it, nothing declares it',
      '-- trigger trg_chains_start_empty on chains: declared, the database has no such trigger',
      '-- trigger trg_events_time_order on events: fires disabled, the declaration says origin',
      '-- trigger trg_retention_log_reject_update on retention_log: fires origin, the declaration says always',
      '-- trigger trg_events_reject_update on events: the database has CREATE TRIGGER trg_events_reject_update BEFORE INSERT ON public.events FOR EACH STATEMENT EXECUTE FUNCTION audit_events_update_gate(), the declaration CREATE TRIGGER trg_events_reject_update BEFORE UPDATE ON public.events FOR EACH STATEMENT EXECUTE FUNCTION audit_events_update_gate()',
    ]);
  });

  it('names a function whose declared text no migration applied', async () => {
    const edited = declareFunction(audit_prune_chain.sql.replace('p_max_events < 1', 'p_max_events < 2'));
    const functions = DECLARED_FUNCTIONS.map((fn) => (fn === audit_prune_chain ? edited : fn));
    const drift = await withEntities(ENTITIES, (dataSource) =>
      schemaDrift(dataSource, { functions, triggers: DECLARED_TRIGGERS }),
    );
    expect(drift).toEqual([
      expect.stringMatching(
        /^-- function audit_prune_chain\(p_chain_id character varying, p_up_to bigint, p_max_events integer, p_clock_offset_seconds bigint\): differs from its declaration at character \d+: the database has …".*p_max_events < 1.*, the declaration …".*p_max_events < 2/,
      ),
    ]);
  });

  it('names a function whose search_path searches temp tables first, and a SECURITY DEFINER one without a search_path (attack finding 7), even when declared so', async () => {
    // Declared and applied alike, so nothing differs from its declaration: the rule is on the function itself.
    const unsafe = declareFunction(audit_erase_events.sql.replace('pg_catalog, pg_temp AS', 'pg_catalog AS'), {
      executableByPublic: false,
    });
    const definer = declareFunction(
      `CREATE OR REPLACE FUNCTION audit_definer_probe() RETURNS integer LANGUAGE sql SECURITY DEFINER AS $$ SELECT 1 $$`,
    );
    const functions = [...DECLARED_FUNCTIONS.map((fn) => (fn === audit_erase_events ? unsafe : fn)), definer];
    const drift = await withEntities(ENTITIES, async (dataSource) => {
      await dataSource.query(
        `ALTER FUNCTION audit_erase_events(varchar, jsonb, jsonb) SET search_path = public, pg_catalog`,
      );
      await dataSource.query(definer.sql);
      try {
        return (await schemaDrift(dataSource, { functions, triggers: DECLARED_TRIGGERS })).sort();
      } finally {
        await dataSource.query(`DROP FUNCTION audit_definer_probe()`);
        await dataSource.query(
          `ALTER FUNCTION audit_erase_events(varchar, jsonb, jsonb) SET search_path = public, pg_catalog, pg_temp`,
        );
      }
    });
    expect(drift).toEqual([
      '-- function audit_definer_probe(): SECURITY DEFINER without its own search_path (it runs on the caller’s)',
      '-- function audit_erase_events(p_account character varying, p_rows jsonb, p_erasure jsonb): search_path public, pg_catalog does not end with pg_temp (temp tables would be searched first)',
    ]);
  });

  it("finds an index of the append-only tables whose pages are no longer filled (migration 1766100000000's fillfactor)", async () => {
    const drift = await withEntities(ENTITIES, async (dataSource) => {
      await dataSource.query('ALTER INDEX pk_events RESET (fillfactor)');
      await dataSource.query('ALTER INDEX ix_events_account_time SET (fillfactor = 90)');
      try {
        return await schemaDrift(dataSource);
      } finally {
        await dataSource.query('ALTER INDEX pk_events SET (fillfactor = 100)');
        await dataSource.query('ALTER INDEX ix_events_account_time SET (fillfactor = 100)');
      }
    });
    expect(drift).toEqual([
      '-- events: the entity declares pk_events PRIMARY KEY (id) WITH (fillfactor=100), the database has PRIMARY KEY (id)',
      '-- events: the entity declares ix_events_account_time INDEX (account_id, "timestamp", id) WITH (fillfactor=100), the database has INDEX (account_id, "timestamp", id) WITH (fillfactor=90)',
    ]);
  });
});
