import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '@app/common';
import { RetentionPolicyRepository } from '@app/database';

/**
 * HOLD_RELEASE_DELAY_HOURS and AUDIT_MIN_RETENTION_DAYS are enforced by the database
 * (retention_policy, docs/contract.md §14), which the service's own role must not be able to lower. At
 * start, a service running as the schema's owner writes its configured values there; one on a
 * least-privilege role cannot, and says so when the database enforces other values
 * (docs/verification.md §9: the owner changes them with one UPDATE).
 */
@Injectable()
export class RetentionPolicySync implements OnApplicationBootstrap {
  private readonly logger = new Logger('Retention');

  constructor(
    private readonly config: AppConfig,
    private readonly policy: RetentionPolicyRepository,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const wanted = {
      holdReleaseDelayHours: this.config.holdReleaseDelayHours,
      auditMinRetentionDays: this.config.auditMinRetentionDays,
    };
    const { enforced, writable } = await this.policy.apply(wanted);
    if (writable) return;
    if (
      enforced.holdReleaseDelayHours !== wanted.holdReleaseDelayHours ||
      enforced.auditMinRetentionDays !== wanted.auditMinRetentionDays
    )
      this.logger.warn(
        `The database enforces HOLD_RELEASE_DELAY_HOURS=${enforced.holdReleaseDelayHours} and AUDIT_MIN_RETENTION_DAYS=${enforced.auditMinRetentionDays} (table retention_policy), not the configured ${wanted.holdReleaseDelayHours} and ${wanted.auditMinRetentionDays}: this role may not change them; the schema's owner can (docs/verification.md §9)`,
      );
  }
}
