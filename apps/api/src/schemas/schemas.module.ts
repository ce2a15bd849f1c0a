import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { EventsModule } from '../events/events.module';
import { ReadsModule } from '../reads/reads.module';
import { SchemasController } from './schemas.controller';
import { SchemasService } from './schemas.service';

/** Action schemas (docs/contract.md §19): their routes; the check on append is EventsModule's SchemaGate. */
@Module({
  imports: [AuditModule, EventsModule, ReadsModule],
  controllers: [SchemasController],
  providers: [SchemasService],
})
export class SchemasModule {}
