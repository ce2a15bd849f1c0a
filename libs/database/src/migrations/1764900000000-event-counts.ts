import { MigrationInterface, QueryRunner } from 'typeorm';

/** The events of `rows` (a transition table, or `events`) counted by the rollup's key, in key order. */
const COUNTED = (rows: string) => `
  SELECT x.account_id, (x."timestamp" AT TIME ZONE 'UTC')::date AS day, x.chain_id, x.action, count(*) AS n
    FROM ${rows} x GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`;

/**
 * `event_counts`: how many events each (account, chain, action) has per UTC day, what statistics
 * (docs/contract.md §13) read for the whole days of a period instead of scanning its events.
 *
 * - Days only: with many chains an hour holds few events of each (action, chain), so hour rows
 *   would be nearly as many as the events, and writing them would double every append's upserts.
 *   Statistics by hour, and the partial days at a period's edges, are counted from the events.
 * - Kept by the database, not the service, so that no write path can forget it: statement-level
 *   AFTER INSERT and AFTER DELETE triggers on `events` with transition tables, one grouped
 *   upsert (or one decrement) per statement. The key holds the chain: appends to one chain are
 *   serialized by the chain's row lock (and so are its prunes, `audit_prune_chain`), appends to
 *   different chains touch different rows, so the rollup adds no lock wait between appends; rows
 *   are written in key order besides, so that even two writers outside that protocol cannot deadlock.
 * - The upsert names the primary key (ON CONFLICT ON CONSTRAINT), and the table is filled to 70 %
 *   only: a count's update changes no indexed column, so with room left on its page it is a HOT
 *   update that writes no index entry.
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
        day         date        NOT NULL,
        chain_id    varchar(30) NOT NULL,
        action      text        NOT NULL,
        count       bigint      NOT NULL,
        CONSTRAINT pk_event_counts PRIMARY KEY (account_id, day, chain_id, action),
        CONSTRAINT ck_event_counts_count CHECK (count > 0)
      ) WITH (fillfactor = 70)`);

    await q.query(`
      CREATE FUNCTION audit_event_counts_added() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog AS $$
      BEGIN
        INSERT INTO event_counts AS c (account_id, day, chain_id, action, count) ${COUNTED('added')}
        ON CONFLICT ON CONSTRAINT pk_event_counts DO UPDATE SET count = c.count + EXCLUDED.count;
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
           WHERE (c.account_id, c.day, c.chain_id, c.action) = (r.account_id, r.day, r.chain_id, r.action)
             AND c.count = r.n
          RETURNING 1),
        lowered AS (
          UPDATE event_counts c SET count = c.count - r.n FROM removed r
           WHERE (c.account_id, c.day, c.chain_id, c.action) = (r.account_id, r.day, r.chain_id, r.action)
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

    await q.query(`INSERT INTO event_counts (account_id, day, chain_id, action, count) ${COUNTED('events')}`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER trg_events_rollup_delete ON events`);
    await q.query(`DROP TRIGGER trg_events_rollup_insert ON events`);
    await q.query(`DROP FUNCTION audit_event_counts_removed()`);
    await q.query(`DROP FUNCTION audit_event_counts_added()`);
    await q.query(`DROP TABLE event_counts`);
  }
}
