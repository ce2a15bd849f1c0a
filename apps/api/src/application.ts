import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AppConfig } from '@app/common';
import { AppModule } from './app.module';
import { configureApp } from './app.setup';
import { JsonReplyAdapter } from './common/json-reply.adapter';
import { startupLogger } from './observability/observability';

/**
 * Creates the application (the database opened and migrated on the way), then hands it the port:
 * `releasePort` closes what answered there while it started (main.ts), just before it listens.
 */
export async function startApplication(config: AppConfig, releasePort: () => Promise<void> | undefined): Promise<void> {
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
    await releasePort();
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
