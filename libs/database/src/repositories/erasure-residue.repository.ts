import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryRunner } from 'typeorm';
import { asString, computed, selectRows } from '../schema/table';

/**
 * The tables an erasure changes (docs/contract.md §17): `events` (audit_erase_events, and the `_audit`
 * members that quoted an erased value) and `idempotency_keys` (the stored answers rewritten, the request
 * digests forgotten). An UPDATE leaves the row's old version, erased values and salt seed included, in
 * the table's pages and in its indexes' pages (a btree keeps the actor and the resource as they were).
 * `erasures` and the `_audit` rows an erasure adds hold no erased value.
 */
export const ERASED_TABLES = ['events', 'idempotency_keys'] as const;

const ERASED = ERASED_TABLES.join(', ');
const WAL_RECYCLE = computed({ setting: [`current_setting('wal_recycle')`, asString] });
const SEGMENTS = computed({ segment: ['name', asString] });
const ANALYZED = computed({ table: ['starelid::regclass::text', asString] });
const CURRENT_SEGMENT = computed({ segment: ['pg_walfile_name(pg_current_wal_insert_lsn())', asString] });
/** A WAL segment file's name (timeline and segment number in hex), as opposed to archive_status, summaries. */
const SEGMENT_NAME = /^[0-9A-F]{24}$/;

/**
 * Where erased values outlive their erasure in the database's own files, and what removes them.
 * Measured on PGlite (test/erasure-residue.e2e-spec.ts, docs/erasure.md): after a plain VACUUM a dead
 * tuple that was the lowest of its page is still whole in the page's free space, and btree pages may
 * keep a removed entry's bytes; no VACUUM touches the WAL; ANALYZE may have copied a value into
 * pg_statistic (a histogram bound, a most common value), whose rewrite leaves the old row there too.
 */
@Injectable()
export class ErasureResidueRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * PostgreSQL: plain VACUUM (ANALYZE) of the erased tables, on a connection of its own (VACUUM runs
   * outside any transaction). It marks the old row versions' space free without the ACCESS EXCLUSIVE
   * lock of VACUUM FULL, so appends go on; the bytes stay until reused, and WAL, archives, replicas
   * and backups are out of the service's reach (docs/erasure.md). Skipped with a warning by PostgreSQL
   * when the role is not the tables' owner (the least-privilege role: autovacuum does it then).
   */
  async vacuum(): Promise<void> {
    await this.alone((runner) => runner.query(`VACUUM (ANALYZE) ${ERASED}`));
  }

  /**
   * The embedded database: leaves no byte of an old row version in DATA_DIR. Run on the pool's one
   * connection, so every other query waits for it (VACUUM FULL locks the tables anyway).
   * 1. VACUUM FULL of the erased tables: heap, TOAST and every index written anew, the old files
   *    truncated at once and unlinked at the next checkpoint. A plain VACUUM is not enough: it
   *    compacts a page by moving its live tuples over the dead ones, so a dead tuple that was the
   *    page's lowest stays, whole, in the page's free space (measured: docs/erasure.md).
   * 2. Statistics (reanalyze): where ANALYZE had sampled the tables, its histograms and most common
   *    values may hold an erased value; sampled again, and pg_statistic rewritten without the rows
   *    replaced. Tables never analyzed are left so (ANALYZE of 100,000 events takes 2.5 s).
   * 3. The write-ahead log, which holds the values (the appends' records, the full-page images of the
   *    erasure's own UPDATE, …): walPastEarlierSegments.
   * Returns how many segment switches step 3 took.
   */
  async rewrite(): Promise<number> {
    return this.alone(async (runner) => {
      const [recycle] = await selectRows(runner.manager, WAL_RECYCLE, `SELECT ${WAL_RECYCLE.sql}`);
      if (recycle?.setting !== 'off') throw new Error('wal_recycle is on: old WAL segments would be kept, renamed');
      await runner.query(`VACUUM FULL ${ERASED}`);
      await reanalyze(runner);
      return walPastEarlierSegments(runner);
    });
  }

  /** `work` on a connection of its own, outside any transaction, released after. */
  private async alone<T>(work: (runner: QueryRunner) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      return await work(runner);
    } finally {
      await runner.release();
    }
  }
}

/** ANALYZE of the erased tables that have statistics, then pg_statistic rewritten (its replaced rows gone). */
async function reanalyze(runner: QueryRunner): Promise<void> {
  const analyzed = new Set(
    (
      await selectRows(
        runner.manager,
        ANALYZED,
        `SELECT DISTINCT ${ANALYZED.sql} FROM pg_statistic WHERE starelid = ANY($1::regclass[])`,
        [ERASED_TABLES],
      )
    ).map((row) => row.table),
  );
  const tables = ERASED_TABLES.filter((table) => analyzed.has(table));
  if (tables.length === 0) return;
  await runner.query(`ANALYZE ${tables.join(', ')}`);
  await runner.query(`VACUUM FULL pg_statistic`);
}

/**
 * A segment switch and a checkpoint, repeated until the current WAL segment is one that did not exist
 * when this began: every segment before it is then removed, and with wal_recycle off
 * (EmbeddedPostgres) removed means unlinked, not renamed into a future segment whose old bytes would
 * stay until overwritten; a new segment is created zero-filled (wal_init_zero). Segments recycled
 * before wal_recycle was off (a DATA_DIR of an earlier version) are such future segments: the loop
 * goes past them. Resolves to the number of switches.
 */
async function walPastEarlierSegments(runner: QueryRunner): Promise<number> {
  const existing = new Set(
    (await selectRows(runner.manager, SEGMENTS, `SELECT ${SEGMENTS.sql} FROM pg_ls_waldir()`))
      .map((row) => row.segment)
      .filter((name) => SEGMENT_NAME.test(name)),
  );
  for (let switches = 1; switches <= existing.size + 1; switches += 1) {
    await runner.query(`SELECT pg_switch_wal()`);
    await runner.query(`CHECKPOINT`);
    const [current] = await selectRows(runner.manager, CURRENT_SEGMENT, `SELECT ${CURRENT_SEGMENT.sql}`);
    if (current && !existing.has(current.segment)) return switches;
  }
  throw new Error(`the write-ahead log is still in one of its ${existing.size} earlier segments`);
}
