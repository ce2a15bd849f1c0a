import { Module } from '@nestjs/common';
import { AuditTrailModule } from '@audit-trail/client/nestjs';
import { InvoicesController } from './invoices.controller';

/**
 * The example application: AuditTrailModule gives every module the client and a durable recorder;
 * the service's address and key come from the environment.
 */
@Module({
  imports: [
    AuditTrailModule.forRoot({
      baseUrl: process.env.AUDIT_TRAIL_URL ?? 'http://localhost:3000',
      apiKey: process.env.AUDIT_TRAIL_KEY ?? '',
      recorder: { spoolDir: process.env.AUDIT_TRAIL_SPOOL ?? './audit-spool', lingerMs: 50 },
    }),
  ],
  controllers: [InvoicesController],
})
export class AppModule {}
