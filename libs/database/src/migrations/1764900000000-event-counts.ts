import { MigrationInterface, QueryRunner } from 'typeorm';

/** The grouped counts of a transition table (`rows`) at both levels, by the rollup's key. */
const COUNTED = (rows: string) => `
  SELECT x.account_id, u.unit, date_trunc(u.unit, x."timestamp", 'UTC') AS bucket, x.chain_id, x.action, count(*) AS n
    FROM ${rows} x CROSS JOIN (VALUES ('hour'), ('day')) AS u(unit)
   GROUP BY 1, 2, 3, 4, 5`;

/**
 * `event_counts`: how many events each (account, chain, action) has per UTC hour and per UTC day,
 * what statistics (contract §13) read instead of scanning the events of a long period.
 *
 * - Kept by the database, not the service, so that no write path can forget it: statement-level
 *   AFTER INSERT and AFTER DELETE triggers on `events` with transition tables, one grouped
 *   upsert (or one decrement) per statement. The key holds the chain: appends to one chain are
 *   serialized by the chain's row lock (and so are its prunes, `audit_prune_chain`), appends to
 *   different chains touch different rows, so the rollup adds no lock wait between appends; rows
 *   are written in key order besides, so that even two writers outside that protocol cannot deadlock.
 * - Two levels: hours, which statistics by hour need and which a period's edges use, and days,
 *   which make a month 30 rows per (chain, action) instead of 720 (with many chains an hour holds
 *   few events of each, and the hours alone would be nearly as many rows as the events).
 * - A delete decrements and removes the rows it empties. Events are deleted only by
 *   `audit_prune_chain` (migration 1764800000000); `trg_events_reject_delete` still refuses every
 *   other delete (and its statement's decrement with it). A decrement that finds fewer events
 *   counted than it removes means the rollup is out of step: it is refused rather than hidden.
 * - The trigger functions are SECURITY DEFINER (their owner's, who ran the migrations): the
 *   least-privilege service role (docs/verification.md §7) needs only SELECT on `event_counts`
 *   and cannot write it; EXECUTE is revoked from PUBLIC, so nobody else can attach them to a table.
 * - ENABLE ALWAYS: the triggers fire under `session_replication_role = replica` too (the bench's
 *   seed and tests write events that way), so the counts follow every row written short of a
 *   trigger switched off. Their names sort after `trg_events_reject_delete`, which runs first.
 * - Existing events are counted in the same transaction, after the triggers exist: CREATE TRIGGER
 *   takes a lock that waits for, and then holds off, every insert into `events`.
 */
export class EventCounts1764900000000 implements MigrationInterface {
  name = 'EventCounts1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE event_counts (
        account_id  varchar(30) NOT NULL,
        unit        varchar(4)  NOT NULL,
        bucket      timestamptz NOT NULL,
        chain_id    varchar(30) NOT NULL,
        action      text        NOT NULL,
        count       bigint      NOT NULL,
        CONSTRAINT pk_event_counts PRIMARY KEY (account_id, unit, bucket, chain_id, action),
        CONSTRAINT ck_event_counts_unit CHECK (unit IN ('hour', 'day')),
        CONSTRAINT ck_event_counts_count CHECK (count > 0)
      )`);

    await q.query(`
      CREATE FUNCTION audit_event_counts_added() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog AS $$
      BEGIN
        INSERT INTO event_counts AS c (account_id, unit, bucket, chain_id, action, count)
          SELECT account_id, unit, bucket, chain_id, action, n FROM (${COUNTED('added')}) AS g
           ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (account_id, unit, bucket, chain_id, action) DO UPDATE SET count = c.count + EXCLUDED.count;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE FUNCTION audit_event_counts_removed() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog AS $$
      DECLARE
        uncounted bigint;
      BEGIN
        WITH removed AS (${COUNTED('gone')}),
        emptied AS (
          DELETE FROM event_counts c USING removed r
           WHERE (c.account_id, c.unit, c.bucket, c.chain_id, c.action) = (r.account_id, r.unit, r.bucket, r.chain_id, r.action)
             AND c.count = r.n
          RETURNING 1),
        lowered AS (
          UPDATE event_counts c SET count = c.count - r.n FROM removed r
           WHERE (c.account_id, c.unit, c.bucket, c.chain_id, c.action) = (r.account_id, r.unit, r.bucket, r.chain_id, r.action)
             AND c.count > r.n
          RETURNING 1)
        SELECT (SELECT count(*) FROM removed) - (SELECT count(*) FROM emptied) - (SELECT count(*) FROM lowered)
          INTO uncounted;
        IF uncounted <> 0 THEN
          RAISE EXCEPTION 'event_counts is out of step with events: % group(s) deleted were not counted', uncounted
            USING ERRCODE = 'data_corrupted';
        END IF;
        RETURN NULL;
      END $$`);
    for (const fn of ['audit_event_counts_added()', 'audit_event_counts_removed()']) {
      await q.query(`REVOKE EXECUTE ON FUNCTION ${fn} FROM PUBLIC`);
    }
    await q.query(`CREATE TRIGGER trg_events_rollup_insert AFTER INSERT ON events REFERENCING NEW TABLE AS added
                   FOR EACH STATEMENT EXECUTE FUNCTION audit_event_counts_added()`);
    await q.query(`CREATE TRIGGER trg_events_rollup_delete AFTER DELETE ON events REFERENCING OLD TABLE AS gone
                   FOR EACH STATEMENT EXECUTE FUNCTION audit_event_counts_removed()`);
    await q.query(`ALTER TABLE events ENABLE ALWAYS TRIGGER trg_events_rollup_insert`);
    await q.query(`ALTER TABLE events ENABLE ALWAYS TRIGGER trg_events_rollup_delete`);

    await q.query(`
      INSERT INTO event_counts (account_id, unit, bucket, chain_id, action, count)
        SELECT account_id, unit, bucket, chain_id, action, n FROM (${COUNTED('events')}) AS g`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER trg_events_rollup_delete ON events`);
    await q.query(`DROP TRIGGER trg_events_rollup_insert ON events`);
    await q.query(`DROP FUNCTION audit_event_counts_removed()`);
    await q.query(`DROP FUNCTION audit_event_counts_added()`);
    await q.query(`DROP TABLE event_counts`);
  }
}
