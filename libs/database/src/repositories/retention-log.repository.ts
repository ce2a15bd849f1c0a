import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Db } from '../transaction-runner';

/** One prune as the database recorded it (retention_log, kind `pruned`). */
export interface RecordedPrune {
  firstPosition: number;
  lastPosition: number;
  /** The smallest stored checkpoint that covered the last pruned position when it was pruned; null: none. */
  checkpointSize: number | null;
  loggedAt: Date;
}

/** What the service reads of `retention_log` (migration 1765000000000): it never writes it, the owner's triggers do. */
@Injectable()
export class RetentionLogRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The chain's recorded prunes, in the order they were recorded. */
  async prunes(chainId: string, db: Db = this.dataSource.manager): Promise<RecordedPrune[]> {
    const rows = (await db.query(
      `SELECT first_position::float8 AS "firstPosition", last_position::float8 AS "lastPosition",
              checkpoint_size::float8 AS "checkpointSize", logged_at AS "loggedAt"
         FROM retention_log WHERE chain_id = $1 AND kind = 'pruned' ORDER BY id`,
      [chainId],
    )) as RecordedPrune[];
    return rows;
  }
}
