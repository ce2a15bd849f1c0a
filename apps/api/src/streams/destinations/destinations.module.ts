import { Module } from '@nestjs/common';
import { AuditModule } from '../../audit/audit.module';
import { SecretBox } from '../secret-box';
import { DestinationControlsController } from './destination-controls.controller';
import { DestinationControlsService } from './destination-controls.service';
import { DestinationTransactions } from './destination-transactions';
import { DestinationsController } from './destinations.controller';
import { DestinationsService } from './destinations.service';
import { SECRET_BOX_PROVIDER } from './secret-box.provider';

/** The destinations admin API (contract §16); exports SecretBox, with which the delivery engine opens credentials. */
@Module({
  imports: [AuditModule],
  controllers: [DestinationsController, DestinationControlsController],
  providers: [SECRET_BOX_PROVIDER, DestinationTransactions, DestinationsService, DestinationControlsService],
  exports: [SecretBox],
})
export class DestinationsModule {}
