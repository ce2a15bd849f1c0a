import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { sqlState } from '../transaction-runner';

/** What the database enforces of retention (retention_policy, migration 1765000000000). */
export interface RetentionPolicyValues {
  holdReleaseDelayHours: number;
  auditMinRetentionDays: number;
}

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
    let writable = true;
    try {
      await this.dataSource.query(
        `UPDATE retention_policy SET hold_release_delay_hours = $1, audit_min_retention_days = $2
          WHERE id AND (hold_release_delay_hours, audit_min_retention_days) IS DISTINCT FROM ($1, $2)`,
        [values.holdReleaseDelayHours, values.auditMinRetentionDays],
      );
    } catch (error) {
      if (sqlState(error) !== INSUFFICIENT_PRIVILEGE) throw error;
      writable = false;
    }
    const [row] = (await this.dataSource.query(
      `SELECT hold_release_delay_hours AS "holdReleaseDelayHours", audit_min_retention_days AS "auditMinRetentionDays"
         FROM retention_policy WHERE id`,
    )) as RetentionPolicyValues[];
    // Its migration inserts the one row, and no role may delete it (the append-only triggers).
    if (!row) throw new Error('retention_policy has no row: the migration 1765000000000 did not run to its end');
    return { enforced: row, writable };
  }
}
