import { Module } from '@nestjs/common';
import { BoundedReads } from './bounded-reads';

/** One BoundedReads for the instance: the list, statistics and the export count against the same slots. */
@Module({
  providers: [BoundedReads],
  exports: [BoundedReads],
})
export class ReadsModule {}
