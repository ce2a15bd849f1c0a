import { Module } from '@nestjs/common';
import { DestinationStream } from 'pino';
import { AppConfig, MetricsModule } from '@app/common';
import { createRootLogger, LOG_DESTINATION, ROOT_LOGGER, stdoutDestination } from './logger';
import { MetricsListener } from './metrics-listener';
import { PinoNestLogger } from './nest-logger';

/**
 * Contract §11: JSON logs (pino), Prometheus metrics on their own listener. The Metrics service
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
    PinoNestLogger,
    MetricsListener,
  ],
  exports: [ROOT_LOGGER, PinoNestLogger],
})
export class ObservabilityModule {}
