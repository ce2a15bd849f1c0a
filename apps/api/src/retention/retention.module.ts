import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module';
import { AuditModule } from '../audit/audit.module';
import { CheckpointsModule } from '../checkpoints/checkpoints.module';
import { DeliveryModule } from '../streams/delivery/delivery.module';
import { RetentionAudit } from './retention-audit';
import { RetentionPolicySync } from './retention-policy-sync';
import { RetentionController } from './retention.controller';
import { RetentionService } from './retention.service';
import { RetentionSweeper } from './retention-sweeper';

/** Retention settings, legal hold and the sweep that prunes (docs/contract.md §14). */
@Module({
  imports: [CheckpointsModule, AuditModule, AccountsModule, DeliveryModule],
  controllers: [RetentionController],
  providers: [RetentionService, RetentionSweeper, RetentionAudit, RetentionPolicySync],
})
export class RetentionModule {}
