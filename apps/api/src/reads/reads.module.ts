import { Module } from '@nestjs/common';
import { BoundedReads } from './bounded-reads';
import { ReadAdmission } from './read-admission';

/** One BoundedReads for the instance: the list, statistics and the export count against the same slots. */
@Module({
  providers: [BoundedReads, ReadAdmission],
  exports: [BoundedReads, ReadAdmission],
})
export class ReadsModule {}
