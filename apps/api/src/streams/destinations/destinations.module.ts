import { Module } from '@nestjs/common';
import { AuditModule } from '../../audit/audit.module';
import { DeliveryModule } from '../delivery/delivery.module';
import { SecretsModule } from '../secrets.module';
import { DestinationControlsController } from './destination-controls.controller';
import { DestinationControlsService } from './destination-controls.service';
import { DestinationTransactions } from './destination-transactions';
import { DestinationsController } from './destinations.controller';
import { DestinationsService } from './destinations.service';

/** The destinations admin API (docs/contract.md §16); a change pokes this instance's delivery engine. */
@Module({
  imports: [AuditModule, SecretsModule, DeliveryModule],
  controllers: [DestinationsController, DestinationControlsController],
  providers: [DestinationTransactions, DestinationsService, DestinationControlsService],
})
export class DestinationsModule {}
