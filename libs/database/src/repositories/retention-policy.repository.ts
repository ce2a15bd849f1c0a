import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RetentionPolicyEntity } from '../entities/retention-policy.entity';
import { selectRows, Table } from '../schema/table';
import { sqlState } from '../transaction-runner';

const policy = new Table(RetentionPolicyEntity, 'p');

/** What the database enforces of retention (retention_policy, migration 1765000000000). */
const POLICY = policy.select('holdReleaseDelayHours', 'auditMinRetentionDays');
export type RetentionPolicyValues = ReturnType<typeof POLICY.decode>;

const INSUFFICIENT_PRIVILEGE = '42501';

/** The one row of `retention_policy`: written by the schema's owner only. */
@Injectable()
export class RetentionPolicyRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Writes these values when they differ from the stored ones, if this session may (the owner's);
   * answers what the database enforces afterwards, and whether it could write.
   */
  async apply(values: RetentionPolicyValues): Promise<{ enforced: RetentionPolicyValues; writable: boolean }> {
    const [delay, minimum] = [policy.bare('holdReleaseDelayHours'), policy.bare('auditMinRetentionDays')];
    let writable = true;
    try {
      await this.dataSource.query(
        `UPDATE retention_policy SET ${delay} = $1, ${minimum} = $2
          WHERE id AND (${delay}, ${minimum}) IS DISTINCT FROM ($1, $2)`,
        [values.holdReleaseDelayHours, values.auditMinRetentionDays],
      );
    } catch (error) {
      if (sqlState(error) !== INSUFFICIENT_PRIVILEGE) throw error;
      writable = false;
    }
    const [row] = await selectRows(
      this.dataSource.manager,
      POLICY,
      `SELECT ${POLICY.sql} FROM retention_policy p WHERE p.id`,
    );
    // Its migration inserts the one row, and no role may delete it (the append-only triggers).
    if (!row) throw new Error('retention_policy has no row: the migration 1765000000000 did not run to its end');
    return { enforced: row, writable };
  }
}
