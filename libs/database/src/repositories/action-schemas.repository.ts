import { ulidToUuid } from '@app/common/ids';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ActionSchemaEntity, SchemaMode } from '../entities/action-schema.entity';
import { asNumber, computed, joined, selectRows, Table } from '../schema/table';
import { Db } from '../transaction-runner';
import { events } from './event-record';

const schemas = new Table(ActionSchemaEntity, 's');

/** A stored version of an action's schema (docs/contract.md §19). */
const VERSION = schemas.select('id', 'accountId', 'action', 'version', 'mode', 'schema', 'createdAt', 'keyId');
export type ActionSchemaRow = ReturnType<typeof VERSION.decode>;

/** The account's schema generation (the greatest version id; 0 without any) beside each latest version. */
const LATEST = joined(VERSION, computed({ generation: ['g.generation', asNumber] }));

/** What the preview checks of a stored event: the members a schema describes. */
const CHECKED = events.select('id', 'actor', 'resource', 'context');
export type CheckedEventRow = ReturnType<typeof CHECKED.decode>;

/** `LIKE` text matching `prefix` literally at the start. */
const likePrefix = (prefix: string): string => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * Every query of `action_schemas` (append-only: a version is inserted, never changed or deleted),
 * and the preview's read of an action's latest events. Methods take the transaction's `db` last,
 * defaulting to the pool.
 */
@Injectable()
export class ActionSchemasRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /**
   * The latest version of each action of the account (tombstones included), oldest action first,
   * with the account's generation, all in one snapshot. No row: `generation` 0 and no schema.
   */
  async latest(accountId: string, db: Db = this.pool): Promise<{ generation: number; versions: ActionSchemaRow[] }> {
    const rows = await selectRows(
      db,
      LATEST,
      `WITH g AS (SELECT coalesce(max(id), 0) AS generation FROM action_schemas WHERE account_id = $1)
       SELECT ${LATEST.sql}
         FROM g LEFT JOIN LATERAL (
           SELECT DISTINCT ON (action) * FROM action_schemas WHERE account_id = $1 ORDER BY action, version DESC
         ) s ON true
        ORDER BY (SELECT min(f.id) FROM action_schemas f WHERE f.account_id = $1 AND f.action = s.action), s.action`,
      [ulidToUuid(accountId)],
    );
    const generation = rows[0]?.generation ?? 0;
    return { generation, versions: rows.filter((row) => row.id !== null).map(({ generation: _, ...row }) => row) };
  }

  /** The account's schema generation now: its greatest version id, 0 without any. */
  async generation(accountId: string, db: Db = this.pool): Promise<number> {
    const [row] = await selectRows(
      db,
      computed({ generation: ['coalesce(max(s.id), 0)', asNumber] }),
      `SELECT coalesce(max(s.id), 0) AS "generation" FROM action_schemas s WHERE s.account_id = $1`,
      [ulidToUuid(accountId)],
    );
    return row?.generation ?? 0;
  }

  /** How many actions of the account have a schema now (their latest version is not a deletion). */
  async currentCount(accountId: string, db: Db = this.pool): Promise<number> {
    const [row] = await selectRows(
      db,
      computed({ count: ['count(*)', asNumber] }),
      `SELECT count(*) AS "count" FROM (
         SELECT DISTINCT ON (action) schema FROM action_schemas WHERE account_id = $1 ORDER BY action, version DESC
       ) latest WHERE latest.schema IS NOT NULL`,
      [ulidToUuid(accountId)],
    );
    return row?.count ?? 0;
  }

  /** Every version of the account's `action`, oldest first. */
  versions(accountId: string, action: string, db: Db = this.pool): Promise<ActionSchemaRow[]> {
    return selectRows(
      db,
      VERSION,
      `SELECT ${VERSION.sql} FROM action_schemas s WHERE s.account_id = $1 AND s.action = $2 ORDER BY s.version`,
      [ulidToUuid(accountId), action],
    );
  }

  async version(
    accountId: string,
    action: string,
    version: number,
    db: Db = this.pool,
  ): Promise<ActionSchemaRow | null> {
    const [row] = await selectRows(
      db,
      VERSION,
      `SELECT ${VERSION.sql} FROM action_schemas s WHERE s.account_id = $1 AND s.action = $2 AND s.version = $3`,
      [ulidToUuid(accountId), action, version],
    );
    return row ?? null;
  }

  /**
   * Adds the next version of the account's `action`. The caller holds the account's row lock
   * (AccountsRepository.lockById), so an account's versions are numbered, and their ids drawn, in
   * commit order: the account's greatest id only grows as its changes commit.
   */
  async add(
    change: {
      accountId: string;
      action: string;
      mode: SchemaMode;
      schema: Record<string, unknown> | null;
      keyId: string;
    },
    db: Db,
  ): Promise<ActionSchemaRow> {
    const [row] = await selectRows(
      db,
      VERSION,
      `INSERT INTO action_schemas AS s (account_id, action, version, mode, schema, key_id)
       SELECT $1, $2, coalesce(max(version), 0) + 1, $3, $4::jsonb, $5
         FROM action_schemas WHERE account_id = $1 AND action = $2
       RETURNING ${VERSION.sql}`,
      [
        ulidToUuid(change.accountId),
        change.action,
        change.mode,
        change.schema === null ? null : JSON.stringify(change.schema),
        change.keyId,
      ],
    );
    if (!row) throw new Error('the new schema version was not inserted');
    return row;
  }

  /**
   * The latest `limit` events of the account whose action `pattern` matches (an action, or a prefix
   * ending in `.*`), newest first: what a preview checks (ix_events_account_action).
   */
  latestEvents(accountId: string, pattern: string, limit: number, db: Db = this.pool): Promise<CheckedEventRow[]> {
    const prefix = pattern.endsWith('.*') ? pattern.slice(0, -1) : null;
    return selectRows(
      db,
      CHECKED,
      `SELECT ${CHECKED.sql} FROM events e
        WHERE ${events.column('accountId')} = $1 AND ${events.column('action')} ${prefix === null ? '= $2' : 'LIKE $2'}
        ORDER BY ${events.column('timestamp')} DESC, ${events.column('id')} DESC LIMIT $3`,
      [ulidToUuid(accountId), prefix === null ? pattern : likePrefix(prefix), limit],
    );
  }
}
