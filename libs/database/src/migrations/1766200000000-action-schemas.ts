import { MigrationInterface, QueryRunner } from 'typeorm';

const OPERATIONS = ['UPDATE', 'DELETE', 'TRUNCATE'] as const;

/**
 * Action schemas (docs/contract.md §19, docs/schemas.md).
 *
 * - `action_schemas`: every version of every account's schema for an action or pattern, append-only
 *   for every role (statement triggers, `ENABLE ALWAYS`, as the checkpoint log's): a DELETE through
 *   the API adds a version whose `schema` is null. `ix_action_schemas_account_id` answers an append's
 *   `max(id)` of the account (its schema generation) with one index probe.
 * - `events.schema_id`, `events.schema_valid`: which version checked the event and whether it held,
 *   outside the hashed members. Null for an event whose action has no schema: nothing stored (the
 *   null bitmap the row already has). No foreign key: no check per inserted row, and a version is
 *   never deleted. `ck_events_schema`: both or neither.
 */
export class ActionSchemas1766200000000 implements MigrationInterface {
  name = 'ActionSchemas1766200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE action_schemas (
        id          serial NOT NULL,
        account_id  uuid NOT NULL,
        action      text NOT NULL,
        version     integer NOT NULL,
        mode        varchar(7) NOT NULL,
        schema      jsonb,
        created_at  timestamptz(3) NOT NULL DEFAULT now(),
        key_id      varchar(30) NOT NULL,
        CONSTRAINT pk_action_schemas PRIMARY KEY (id),
        CONSTRAINT uq_action_schemas_version UNIQUE (account_id, action, version),
        CONSTRAINT ck_action_schemas_version CHECK (version >= 1),
        CONSTRAINT ck_action_schemas_mode CHECK (mode IN ('warn', 'enforce')),
        CONSTRAINT fk_action_schemas_account FOREIGN KEY (account_id) REFERENCES accounts (id)
      )`);
    await q.query(`CREATE INDEX ix_action_schemas_account_id ON action_schemas (account_id, id)`);
    for (const op of OPERATIONS) {
      const trigger = `trg_action_schemas_reject_${op.toLowerCase()}`;
      await q.query(
        `CREATE TRIGGER ${trigger} BEFORE ${op} ON action_schemas FOR EACH STATEMENT EXECUTE FUNCTION audit_reject_change()`,
      );
      await q.query(`ALTER TABLE action_schemas ENABLE ALWAYS TRIGGER ${trigger}`);
    }
    await q.query(`
      ALTER TABLE events
        ADD COLUMN schema_id    integer,
        ADD COLUMN schema_valid boolean,
        ADD CONSTRAINT ck_events_schema CHECK ((schema_id IS NULL) = (schema_valid IS NULL))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE events DROP CONSTRAINT ck_events_schema, DROP COLUMN schema_valid, DROP COLUMN schema_id`,
    );
    await q.query(`DROP TABLE action_schemas`);
  }
}
