import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadAppConfig } from '@app/common';
import { AppModule } from './app.module';
import { configureApp } from './app.setup';
import { JsonReplyAdapter } from './common/json-reply.adapter';
import { startupLogger } from './observability/observability';
import { listenWhileStarting } from './starting-server';

async function bootstrap(): Promise<void> {
  // The port answers from the start: 503 while the database is opened and migrated (minutes for an upgrade
  // of millions of events), so that a load balancer sees a service starting, not one gone.
  const config = loadAppConfig(process.env);
  // (Port 0, a port chosen by the system, has nothing to hold: the application would get another.)
  const starting = config.port === 0 ? null : await listenWhileStarting(config.port, config.host);
  let app: Awaited<ReturnType<typeof NestFactory.create>>;
  try {
    app = await NestFactory.create(AppModule, new JsonReplyAdapter(), {
      bodyParser: false,
      // Not bufferLogs: Nest would write the buffered lines when the app is set up (or fails to be),
      // all with that moment's time; nine "Retrying" lines 3 s apart read as one instant.
      logger: startupLogger(),
    });
    configureApp(app);
    // On SIGTERM or SIGINT (and Nest's other signals): ShutdownService drains, the pools close, exit 0.
    app.enableShutdownHooks([], { useProcessExit: true });
    await app.init();
  } finally {
    await starting?.close();
  }
  await app.listen(config.port, config.host);
  const logger = new Logger('Main');
  logger.log(
    `Audit trail service listening on http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${config.port}`,
  );
  if (config.bootstrapKeys.length === 0 && config.databaseUrl !== null) {
    logger.warn('No API_KEYS set: only keys made with `npm run cli -- keys create` can call the API.');
  }
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
