import { Module } from '@nestjs/common';
import { AuditModule } from '../../audit/audit.module';
import { ErasureNoticesModule } from '../../erasure/erasure-notices';
import { SecretsModule } from '../secrets.module';
import { DeliveryAudit } from './delivery-audit';
import { DeliveryEngine } from './delivery-engine';
import { StreamGaps } from './stream-gaps';

/** The delivery engine of streams (docs/contract.md §16): leases, workers, and the gaps a prune leaves. */
@Module({
  imports: [AuditModule, SecretsModule, ErasureNoticesModule],
  providers: [DeliveryEngine, DeliveryAudit, StreamGaps],
  exports: [DeliveryEngine, StreamGaps],
})
export class DeliveryModule {}
