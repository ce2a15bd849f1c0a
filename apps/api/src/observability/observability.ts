import { INestApplication, LoggerService } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import type { Logger } from 'pino';
import { AppConfig, loadAppConfig, Metrics } from '@app/common';
import { createRootLogger, ROOT_LOGGER, stdoutDestination } from './logger';
import { PinoNestLogger } from './nest-logger';
import { requestLogging } from './request-logging';
import { requestMetrics } from './request-metrics';

/**
 * The HTTP edge's part of contract §11, run by configureApp right after the request id is set:
 * pino as Nest's logger (lines buffered since the app was created are written now), TRUST_PROXY as
 * Express's `trust proxy` (the client address of logs and of the refused-key limit), then one log
 * line and the request metrics per request. With LOG_LEVEL=silent and METRICS_PORT=0 neither
 * middleware is installed: the requests take the path they took before either existed.
 */
export function configureObservability(app: INestApplication): void {
  const express = app as NestExpressApplication;
  const config = app.get(AppConfig);
  app.useLogger(app.get(PinoNestLogger));
  app.flushLogs();
  express.set('trust proxy', config.trustProxy);
  if (config.logLevel !== 'silent') express.use(requestLogging(app.get<Logger>(ROOT_LOGGER)));
  if (config.metricsPort !== 0) express.use(requestMetrics(app.get(Metrics)));
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
