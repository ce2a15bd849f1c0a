import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Db } from '../transaction-runner';
import { SqlQuery, withWrite } from './sql-query';

/** The head now, and what lies above it (whole-chain verification's last look). */
export interface HeadFacts {
  position: number;
  checkpointsAbove: number;
  smallestAbove: number;
  eventsBeyond: number;
  firstBeyond: number;
  /** merkle_nodes rows of subtrees that end beyond the head: never written by the service (it stores a node once complete). */
  nodesBeyond: number;
}

/** A chain row: also the chain's head, moved forward in the same transaction as its events. */
export interface ChainRecord {
  id: string;
  accountId: string;
  name: string;
  lastPosition: number;
  lastHash: string;
  lastTimestamp: Date | null;
  createdAt: Date;
  /** The first retained position (docs/contract.md §14): 1 until a prune, lastPosition + 1 when all were pruned. */
  firstPosition: number;
  /** The hash and time of the event at firstPosition − 1, the last pruned; null before any prune. */
  prunedHash: string | null;
  prunedTimestamp: Date | null;
}

/** Who placed a legal hold (docs/contract.md §14): only an operator lifts an operator's. */
export type LegalHoldBy = 'operator' | 'admin';

/** A chain's retention settings and its account's (docs/contract.md §14), as chain status shows them. */
export interface ChainRetention {
  retentionDays: number | null;
  /**
   * The retention that applies, as the database's policy computes it for the sweep
   * (audit_effective_retention_days: own, else the account's, an `_audit` chain's never below
   * retention_policy.audit_min_retention_days); null: forever.
   */
  effectiveRetentionDays: number | null;
  legalHold: boolean;
  legalHoldBy: LegalHoldBy | null;
  accountRetentionDays: number | null;
  accountLegalHold: boolean;
  accountLegalHoldBy: LegalHoldBy | null;
}

/** A chain row with its retention settings (status, list). */
export interface ChainStatusRecord extends ChainRecord {
  retention: ChainRetention;
}

/** A chain the retention sweep may prune now: not on hold, a retention, its first retained event old enough. */
export interface PrunableChain {
  id: string;
  accountId: string;
  retentionDays: number;
}

/** Where a chain's head stands after the events an append gives it. */
export interface ChainHeadMove {
  id: string;
  lastPosition: number;
  lastHash: string;
  lastTimestamp: Date;
}

interface ChainRow {
  id: string;
  account_id: string;
  name: string;
  last_position: string | number;
  last_hash: string;
  last_timestamp: Date | null;
  created_at: Date;
  first_position: string | number;
  pruned_hash: string | null;
  pruned_timestamp: Date | null;
}

interface ChainStatusRow extends ChainRow {
  retention_days: number | null;
  effective_retention_days: number | null;
  legal_hold: boolean;
  legal_hold_by: LegalHoldBy | null;
  account_retention_days: number | null;
  account_legal_hold: boolean;
  account_legal_hold_by: LegalHoldBy | null;
}

const COLUMNS =
  'c.id, c.account_id, c.name, c.last_position, c.last_hash, c.last_timestamp, c.created_at, c.first_position, c.pruned_hash, c.pruned_timestamp';
/** COLUMNS and the retention settings, the account's read through `a` (joined by the caller). */
const STATUS_COLUMNS = `${COLUMNS}, c.retention_days, c.legal_hold, c.legal_hold_by,
  audit_effective_retention_days(c.name, c.retention_days, a.retention_days) AS effective_retention_days,
  a.retention_days AS account_retention_days, a.legal_hold AS account_legal_hold, a.legal_hold_by AS account_legal_hold_by`;

function toChainRecord(row: ChainRow): ChainRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    lastPosition: Number(row.last_position),
    lastHash: row.last_hash,
    lastTimestamp: row.last_timestamp,
    createdAt: row.created_at,
    firstPosition: Number(row.first_position),
    prunedHash: row.pruned_hash,
    prunedTimestamp: row.pruned_timestamp,
  };
}

function toChainStatusRecord(row: ChainStatusRow): ChainStatusRecord {
  return {
    ...toChainRecord(row),
    retention: {
      retentionDays: row.retention_days,
      effectiveRetentionDays: row.effective_retention_days,
      legalHold: row.legal_hold,
      legalHoldBy: row.legal_hold_by,
      accountRetentionDays: row.account_retention_days,
      accountLegalHold: row.account_legal_hold,
      accountLegalHoldBy: row.account_legal_hold_by,
    },
  };
}

/** Every query of the `chains` table. Methods take the transaction's `db` last, defaulting to the pool. */
@Injectable()
export class ChainsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /**
   * The account's chain head, locked FOR SHARE until the transaction ends: appends (which take it
   * FOR UPDATE) wait, other readers do not. Null for an unknown chain or another account's.
   */
  async lockHeadForShare(
    accountId: string,
    chainId: string,
    db: Db = this.pool,
  ): Promise<{ size: number; hash: string; firstPosition: number } | null> {
    const [row] = (await db.query(
      `SELECT last_position::text AS size, last_hash, first_position::text AS first_position
         FROM chains WHERE id = $1 AND account_id = $2 FOR SHARE`,
      [chainId, accountId],
    )) as { size: string; last_hash: string; first_position: string }[];
    return row ? { size: Number(row.size), hash: row.last_hash, firstPosition: Number(row.first_position) } : null;
  }

  /** The head now, and what lies above it, read in one statement (one snapshot). */
  async headFacts(chainId: string, db: Db = this.pool): Promise<HeadFacts> {
    const [row] = (await db.query(
      `SELECT c.last_position::text AS position,
              (SELECT count(*) FROM checkpoints k WHERE k.chain_id = c.id AND k.size > c.last_position)::int AS checkpoints_above,
              (SELECT min(k.size) FROM checkpoints k WHERE k.chain_id = c.id AND k.size > c.last_position)::text AS smallest_above,
              (SELECT count(*) FROM events e WHERE e.chain_id = c.id AND e.position > c.last_position)::int AS events_beyond,
              (SELECT min(e.position) FROM events e WHERE e.chain_id = c.id AND e.position > c.last_position)::text AS first_beyond,
              -- Node (level, index) ends beyond the head when index >= head >> level: one index range per level.
              (SELECT count(*) FROM generate_series(0, 62) AS l(level)
                 JOIN merkle_nodes n ON n.chain_id = c.id AND n.level = l.level AND n."index" >= (c.last_position >> l.level)
              )::int AS nodes_beyond
         FROM chains c WHERE c.id = $1`,
      [chainId],
    )) as {
      position: string;
      checkpoints_above: number;
      smallest_above: string | null;
      events_beyond: number;
      first_beyond: string | null;
      nodes_beyond: number;
    }[];
    return {
      position: Number(row?.position ?? 0),
      checkpointsAbove: row?.checkpoints_above ?? 0,
      smallestAbove: Number(row?.smallest_above ?? 0),
      eventsBeyond: row?.events_beyond ?? 0,
      firstBeyond: Number(row?.first_beyond ?? 0),
      nodesBeyond: row?.nodes_beyond ?? 0,
    };
  }

  /** Oldest first by (createdAt, id), strictly after `cursor`: an index range scan on ix_chains_account_created. */
  async list(
    accountId: string,
    filters: { name?: string },
    limit: number,
    cursor?: { time: string; id: string },
    db: Db = this.pool,
  ): Promise<ChainStatusRecord[]> {
    const where = ['c.account_id = $1'];
    const params: unknown[] = [accountId];
    if (filters.name !== undefined) {
      params.push(filters.name);
      where.push(`c.name = $${params.length}`);
    }
    if (cursor) {
      params.push(cursor.time, cursor.id);
      where.push(`(c.created_at, c.id) > ($${params.length - 1}::timestamptz, $${params.length})`);
    }
    params.push(limit);
    const rows = (await db.query(
      `SELECT ${STATUS_COLUMNS} FROM chains c JOIN accounts a ON a.id = c.account_id WHERE ${where.join(' AND ')}
        ORDER BY c.created_at, c.id LIMIT $${params.length}`,
      params,
    )) as ChainStatusRow[];
    return rows.map(toChainStatusRecord);
  }

  /** One chain of this account, or null (also for another account's chain). */
  async findOwned(accountId: string, id: string, db: Db = this.pool): Promise<ChainStatusRecord | null> {
    const [row] = (await db.query(
      `SELECT ${STATUS_COLUMNS} FROM chains c JOIN accounts a ON a.id = c.account_id WHERE c.id = $1 AND c.account_id = $2`,
      [id, accountId],
    )) as ChainStatusRow[];
    return row ? toChainStatusRecord(row) : null;
  }

  /**
   * A chain whose settings are about to change, locked (FOR NO KEY UPDATE, as the UPDATE would) until
   * the transaction ends, so that who placed its hold is decided on what is committed: of this
   * account, or of any account when `accountId` is null (an operator's, docs/contract.md §14). Null: no such chain.
   */
  async lockForSettings(accountId: string | null, id: string, db: Db): Promise<ChainStatusRecord | null> {
    const [row] = (await db.query(
      `SELECT ${STATUS_COLUMNS} FROM chains c JOIN accounts a ON a.id = c.account_id
        WHERE c.id = $1 AND ($2::varchar IS NULL OR c.account_id = $2) FOR NO KEY UPDATE OF c`,
      [id, accountId],
    )) as ChainStatusRow[];
    return row ? toChainStatusRecord(row) : null;
  }

  /**
   * The hash and time of the last pruned event when `position` is the chain's first retained one
   * (docs/contract.md §14: what that event's link is checked against); null otherwise.
   */
  async prunedLinkFacts(
    accountId: string,
    chainId: string,
    position: number,
    db: Db = this.pool,
  ): Promise<{ hash: string; timestamp: string } | null> {
    const [row] = (await db.query(
      `SELECT pruned_hash AS hash, to_char(pruned_timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "timestamp"
         FROM chains WHERE id = $1 AND account_id = $2 AND first_position = $3 AND pruned_hash IS NOT NULL`,
      [chainId, accountId, position],
    )) as { hash: string; timestamp: string }[];
    return row ?? null;
  }

  /** Sets the chain's own retention (null: follow the account); false for an unknown chain or another account's. */
  async setRetention(accountId: string, id: string, days: number | null, db: Db = this.pool): Promise<boolean> {
    const rows = (await db.query(
      `WITH u AS (UPDATE chains SET retention_days = $3 WHERE id = $1 AND account_id = $2 RETURNING id) SELECT id FROM u`,
      [id, accountId, days],
    )) as unknown[];
    return rows.length === 1;
  }

  /**
   * Puts the chain on legal hold (with its reason and who placed it: `by`) or lifts it (`by` null);
   * false for an unknown chain or another account's.
   */
  async setLegalHold(
    accountId: string,
    id: string,
    hold: { hold: boolean; reason: string | null; by: LegalHoldBy | null },
    db: Db = this.pool,
  ): Promise<boolean> {
    const rows = (await db.query(
      `WITH u AS (UPDATE chains SET legal_hold = $3, legal_hold_reason = $4, legal_hold_by = $5
                   WHERE id = $1 AND account_id = $2 RETURNING id)
       SELECT id FROM u`,
      [id, accountId, hold.hold, hold.reason, hold.by],
    )) as unknown[];
    return rows.length === 1;
  }

  /**
   * The chains a retention sweep would prune now (of one account, or all): neither the chain nor its
   * account on hold, a retention that is not forever, and the first retained event older than it,
   * `now` being the database's clock plus `clockOffsetSeconds`, the retention the database's
   * (audit_effective_retention_days), and no hold of it or its account lifted less than
   * HOLD_RELEASE_DELAY_HOURS ago (audit_hold_lifted_recently). audit_prune_chain checks all of it
   * again under the chain's lock; this only spares the others a transaction.
   */
  async prunable(clockOffsetSeconds: number, accountId: string | null, db: Db = this.pool): Promise<PrunableChain[]> {
    const rows = (await db.query(
      `SELECT c.id, c.account_id, r.days AS retention_days
         FROM chains c JOIN accounts a ON a.id = c.account_id
        CROSS JOIN LATERAL (SELECT audit_effective_retention_days(c.name, c.retention_days, a.retention_days) AS days) r
        WHERE NOT c.legal_hold AND NOT a.legal_hold AND r.days IS NOT NULL
          AND c.first_position <= c.last_position AND ($2::varchar IS NULL OR c.account_id = $2)
          AND EXISTS (SELECT 1 FROM events e WHERE e.chain_id = c.id AND e.position = c.first_position
                         AND e."timestamp" < now() + make_interval(secs => $1::bigint) - make_interval(days => r.days))
          AND NOT audit_hold_lifted_recently(c.id, c.account_id, now() + make_interval(secs => $1::bigint))
        ORDER BY c.id`,
      [clockOffsetSeconds, accountId],
    )) as { id: string; account_id: string; retention_days: number }[];
    return rows.map((row) => ({ id: row.id, accountId: row.account_id, retentionDays: row.retention_days }));
  }

  /**
   * Takes the chain's row lock FOR UPDATE, as appends do, until the caller's transaction ends: a
   * prune batch takes it first, so that the sweep can time how long it holds it (not how long it
   * waited for an append to let go of it). audit_prune_chain takes it again, a no-op then.
   */
  async lockForPrune(chainId: string, db: Db): Promise<void> {
    await db.query(`SELECT 1 FROM chains WHERE id = $1 FOR UPDATE`, [chainId]);
  }

  /**
   * One batch of a chain's prune, in the caller's transaction: audit_prune_chain (migration
   * 1764800000000) locks the chain's row as appends do, checks the policy itself and deletes at
   * most `maxEvents` of the prefix older than the retention, none above position `upTo`. What it
   * deleted: positions `from` … `to` (none when `deleted` is 0).
   */
  async pruneBatch(
    chainId: string,
    upTo: number,
    maxEvents: number,
    clockOffsetSeconds: number,
    db: Db = this.pool,
  ): Promise<{ deleted: number; from: number; to: number }> {
    const [pruned] = (await db.query(`SELECT audit_prune_chain($1, $2, $3, $4)::float8 AS deleted`, [
      chainId,
      upTo,
      maxEvents,
      clockOffsetSeconds,
    ])) as { deleted: number }[];
    const [chain] = (await db.query(`SELECT first_position::float8 AS first FROM chains WHERE id = $1`, [chainId])) as {
      first: number;
    }[];
    const deleted = pruned?.deleted ?? 0;
    const to = (chain?.first ?? 1) - 1;
    return { deleted, from: to - deleted + 1, to };
  }

  /**
   * What each of these accounts' chains add up to, from the heads alone (no count over events:
   * positions are contiguous from 1, so a chain's size is its last position). Missing: no chains.
   */
  async totalsByAccount(
    accountIds: readonly string[],
    db: Db = this.pool,
  ): Promise<Map<string, { eventCount: number; chainCount: number; lastEventAt: Date | null }>> {
    const rows = (await db.query(
      `SELECT c.account_id AS "accountId", sum(c.last_position - c.first_position + 1)::text AS events, count(*)::int AS chains,
              max(c.last_timestamp) AS "lastEventAt"
         FROM chains c WHERE c.account_id = ANY($1::varchar[]) GROUP BY c.account_id`,
      [accountIds],
    )) as { accountId: string; events: string; chains: number; lastEventAt: Date | null }[];
    return new Map(
      rows.map((r) => [
        r.accountId,
        { eventCount: Number(r.events), chainCount: r.chains, lastEventAt: r.lastEventAt },
      ]),
    );
  }

  /**
   * Creates the chains that do not exist yet. A racing creator (another request or instance)
   * wins: ON CONFLICT DO NOTHING waits for its commit, and the caller then uses its row.
   */
  async createMissing(chains: readonly { id: string; accountId: string; name: string }[], db: Db = this.pool) {
    await db.query(
      `INSERT INTO chains (id, account_id, name)
       SELECT w.id, w.account_id, w.name FROM unnest($1::varchar[], $2::varchar[], $3::varchar[]) AS w(id, account_id, name)
       WHERE NOT EXISTS (SELECT 1 FROM chains c WHERE c.account_id = w.account_id AND c.name = w.name)
       ON CONFLICT (account_id, name) DO NOTHING`,
      [chains.map((c) => c.id), chains.map((c) => c.accountId), chains.map((c) => c.name)],
    );
  }

  /**
   * Locks the heads of these chains (account + name) with `FOR UPDATE`, in id order, so that
   * concurrent transactions of this or another instance never deadlock and never fork a chain.
   * Chains that do not exist are missing from the answer.
   */
  async lockHeads(chains: readonly { accountId: string; name: string }[], db: Db = this.pool): Promise<ChainRecord[]> {
    const rows = (await db.query(
      `SELECT ${COLUMNS}
         FROM chains c JOIN unnest($1::varchar[], $2::varchar[]) AS w(account_id, name)
           ON c.account_id = w.account_id AND c.name = w.name
        ORDER BY c.id
          FOR UPDATE OF c`,
      [chains.map((c) => c.accountId), chains.map((c) => c.name)],
    )) as ChainRow[];
    return rows.map(toChainRecord);
  }

  /**
   * Moves every head in one statement; the caller holds their locks. `along`, a write of the same
   * transaction that need not see the heads move (the chains' new Merkle nodes), runs in the same
   * statement (`withWrite`): one round trip less under the locks.
   */
  async moveHeads(heads: readonly ChainHeadMove[], db: Db = this.pool, along: SqlQuery | null = null): Promise<void> {
    const move: SqlQuery = {
      text: `UPDATE chains SET last_position = h.position, last_hash = h.hash, last_timestamp = h.ts
         FROM unnest($1::varchar[], $2::int8[], $3::text[], $4::timestamptz[]) AS h(id, position, hash, ts)
        WHERE chains.id = h.id`,
      values: [
        heads.map((h) => h.id),
        heads.map((h) => h.lastPosition),
        heads.map((h) => h.lastHash),
        heads.map((h) => h.lastTimestamp.toISOString()),
      ],
    };
    const { text, values } = along ? withWrite(along, move) : move;
    await db.query(text, values);
  }
}
