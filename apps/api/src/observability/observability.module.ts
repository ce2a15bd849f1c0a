import { Module } from '@nestjs/common';
import { DestinationStream } from 'pino';
import { AppConfig, MetricsModule } from '@app/common';
import {
  createRequestLogger,
  createRootLogger,
  LOG_DESTINATION,
  REQUEST_LOGGER,
  ROOT_LOGGER,
  stdoutDestination,
} from './logger';
import { MetricsListener } from './metrics-listener';
import { PinoNestLogger } from './nest-logger';

/**
 * docs/contract.md §11: JSON logs (pino), Prometheus metrics on their own listener. The Metrics service
 * (libs/common, global) is what features count with; configureObservability (observability.ts)
 * puts the request logging and metrics at the HTTP edge.
 */
@Module({
  imports: [MetricsModule],
  providers: [
    { provide: LOG_DESTINATION, useFactory: stdoutDestination },
    {
      provide: ROOT_LOGGER,
      inject: [AppConfig, LOG_DESTINATION],
      useFactory: (config: AppConfig, destination: DestinationStream) => createRootLogger(config, destination),
    },
    {
      provide: REQUEST_LOGGER,
      inject: [AppConfig, LOG_DESTINATION],
      useFactory: (config: AppConfig, destination: DestinationStream) => createRequestLogger(config, destination),
    },
    PinoNestLogger,
    MetricsListener,
  ],
  exports: [ROOT_LOGGER, REQUEST_LOGGER, PinoNestLogger],
})
export class ObservabilityModule {}
