import { DataSource } from 'typeorm';

/** How a table is vacuumed after a retention prune (RETENTION_VACUUM). */
export interface VacuumOptions {
  /** VACUUM FULL: the table rewritten under an ACCESS EXCLUSIVE lock, its free space returned to the system. */
  full: boolean;
  /** Wait at most this long for the table's lock, then fail with SQLSTATE 55P03 (lock_not_available); null: no limit. */
  lockWaitMilliseconds: number | null;
}

/** SQLSTATE of a lock not granted within `lock_timeout`. */
export const LOCK_NOT_AVAILABLE = '55P03';

/**
 * VACUUM (ANALYZE) of one of the tables a prune deletes from, on a connection of its own: VACUUM runs
 * outside any transaction, and `lock_timeout` is a setting of the session, reset before the
 * connection goes back to the pool.
 */
export async function vacuumTable(
  dataSource: DataSource,
  table: 'events' | 'merkle_nodes',
  { full, lockWaitMilliseconds }: VacuumOptions,
): Promise<void> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    if (lockWaitMilliseconds !== null)
      await runner.query(`SELECT set_config('lock_timeout', $1, false)`, [`${lockWaitMilliseconds}ms`]);
    await runner.query(full ? `VACUUM (FULL, ANALYZE) ${table}` : `VACUUM (ANALYZE) ${table}`);
  } finally {
    try {
      if (lockWaitMilliseconds !== null) await runner.query(`RESET lock_timeout`);
    } finally {
      await runner.release();
    }
  }
}
