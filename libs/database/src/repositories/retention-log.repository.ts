import { ulidToUuid } from '@app/common/ids';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RetentionLogEntity } from '../entities/retention-log.entity';
import { asNumber, computed, joined, selectRows, Table } from '../schema/table';
import { Db } from '../transaction-runner';

const log = new Table(RetentionLogEntity, 'r');

/**
 * One prune as the database recorded it (retention_log, kind `pruned`): the first and last positions
 * it deleted (never null for a prune), the smallest stored checkpoint that covered the last pruned
 * position when it was pruned (null: none), and when.
 */
const PRUNE = joined(
  computed<{
    firstPosition: NonNullable<RetentionLogEntity['firstPosition']>;
    lastPosition: NonNullable<RetentionLogEntity['lastPosition']>;
  }>({
    firstPosition: [log.column('firstPosition'), asNumber],
    lastPosition: [log.column('lastPosition'), asNumber],
  }),
  log.select('checkpointSize', 'loggedAt'),
);
export type RecordedPrune = ReturnType<typeof PRUNE.decode>;

/** What the service reads of `retention_log` (migration 1765000000000): it never writes it, the owner's triggers do. */
@Injectable()
export class RetentionLogRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The chain's recorded prunes, in the order they were recorded. */
  async prunes(chainId: string, db: Db = this.dataSource.manager): Promise<RecordedPrune[]> {
    return selectRows(
      db,
      PRUNE,
      `SELECT ${PRUNE.sql} FROM retention_log r
        WHERE ${log.column('chainId')} = $1 AND ${log.column('kind')} = 'pruned' ORDER BY r.id`,
      [ulidToUuid(chainId)],
    );
  }
}
