import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { asNumber, computed, selectRows } from '../schema/table';
import { Db } from '../transaction-runner';
import { vacuumTable, VacuumOptions } from './vacuum';

/** The tables a retention prune deletes from, which it vacuums and measures afterwards. */
export type PrunedTable = 'events' | 'merkle_nodes';

const ROWS = computed({ rows: ['reltuples::float8', asNumber] });
const BYTES = computed({ bytes: ['pg_total_relation_size($1::regclass)::float8', asNumber] });

/** The upkeep of the tables a retention prune deletes from: VACUUM, and what it is decided and logged by. */
@Injectable()
export class MaintenanceRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /**
   * After a retention prune: VACUUM (ANALYZE) makes the deleted rows' space reusable by the inserts
   * that follow (and gives back trailing pages), without the exclusive lock of VACUUM FULL that
   * would stop every append; VACUUM FULL rewrites the table with that lock and returns the space.
   */
  async vacuum(table: PrunedTable, options: VacuumOptions): Promise<void> {
    await vacuumTable(this.dataSource, table, options);
  }

  /**
   * The table's live rows as ANALYZE estimates them from a sample (pg_class.reltuples): right
   * after a prune, what remains, at the price of a sample whatever the table's size.
   */
  async analyzedRows(table: PrunedTable): Promise<number> {
    await this.pool.query(`ANALYZE ${table}`);
    const [row] = await selectRows(this.pool, ROWS, `SELECT ${ROWS.sql} FROM pg_class WHERE oid = $1::regclass`, [
      table,
    ]);
    return Math.max(0, row?.rows ?? 0);
  }

  /** The table's size with its indexes and TOAST, in bytes (pg_total_relation_size). */
  async storageBytes(table: PrunedTable): Promise<number> {
    const [row] = await selectRows(this.pool, BYTES, `SELECT ${BYTES.sql}`, [table]);
    return row?.bytes ?? 0;
  }
}
