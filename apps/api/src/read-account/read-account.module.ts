import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { OperatorReadLog } from './operator-read-log';
import { ReadAccountGuard } from './read-account.guard';

/** Operator reads of an account (docs/contract.md §12): the step that decides the account a request reads, and its record. */
@Module({
  imports: [AuditModule],
  providers: [ReadAccountGuard, OperatorReadLog],
  exports: [ReadAccountGuard],
})
export class ReadAccountModule {}
