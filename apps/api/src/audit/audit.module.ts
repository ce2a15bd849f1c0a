import { Module } from '@nestjs/common';
import { AuditTrail } from '@app/database';
import { EventsModule } from '../events/events.module';
import { LedgerAuditTrail } from './ledger-audit-trail';

/** The `_audit` chain's writer, for the features whose changes are recorded (keys, accounts, exports). */
@Module({
  imports: [EventsModule],
  providers: [{ provide: AuditTrail, useClass: LedgerAuditTrail }],
  exports: [AuditTrail],
})
export class AuditModule {}
