import { Module } from '@nestjs/common';
import { AuthModule, KeysService } from '@app/auth';
import { AuditModule } from '../audit/audit.module';
import { KeysApiService } from './keys-api.service';
import { KeysController } from './keys.controller';

@Module({
  imports: [AuthModule, AuditModule],
  controllers: [KeysController],
  providers: [KeysService, KeysApiService],
})
export class KeysModule {}
