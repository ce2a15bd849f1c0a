import { INestApplication, LoggerService } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import type { Logger } from 'pino';
import { AppConfig, loadAppConfig, Metrics } from '@app/common';
import { createRootLogger, REQUEST_LOGGER, stdoutDestination } from './logger';
import { PinoNestLogger } from './nest-logger';
import { observeRequests } from './request-observer';
import { ShutdownService } from '../lifecycle/shutdown.service';

/**
 * The HTTP edge's part of docs/contract.md §11, run by configureApp right after the request id is set:
 * pino as Nest's logger (the start-up logger's until now, on the same stdout buffer), TRUST_PROXY as
 * Express's `trust proxy` (the client address of logs and of the refused-key limit), then one log
 * line and the request metrics per request (a 503 while the service stops is no error: it is what
 * a stop answers). With LOG_LEVEL=silent and METRICS_PORT=0 the
 * middleware is not installed: the requests take the path they took before either existed.
 */
export function configureObservability(app: INestApplication): void {
  const express = app as NestExpressApplication;
  const config = app.get(AppConfig);
  app.useLogger(app.get(PinoNestLogger));
  express.set('trust proxy', config.trustProxy);
  const logger = config.logLevel === 'silent' ? null : app.get<Logger>(REQUEST_LOGGER);
  const metrics = config.metricsPort === 0 ? null : app.get(Metrics);
  const shutdown = app.get(ShutdownService);
  if (logger || metrics) express.use(observeRequests(logger, metrics, () => shutdown.stopping));
}

/**
 * Nest's logger from NestFactory.create until configureObservability sets the app's (main.ts): a
 * start that fails, on a bad environment too, says so in JSON lines like everything else.
 */
export function startupLogger(): LoggerService {
  let config: AppConfig;
  try {
    config = loadAppConfig(process.env);
  } catch {
    config = new AppConfig(); // the error is reported when the app loads its config
  }
  return new PinoNestLogger(createRootLogger(config, stdoutDestination()));
}
