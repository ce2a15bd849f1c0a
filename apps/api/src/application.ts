import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { KeyBootstrapService, type DevelopmentKeys } from '@app/auth';
import type { AppConfig } from '@app/common';
import { AppModule } from './app.module';
import { configureApp } from './app.setup';
import { JsonReplyAdapter } from './common/json-reply.adapter';
import { stdoutWritten } from './observability/logger';
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
  const base = `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${config.port}`;
  const logger = new Logger('Main');
  logger.log(`Audit trail service listening on ${base}; the console is at ${base}/console`);
  if (config.bootstrapKeys.length === 0 && config.databaseUrl !== null) {
    logger.warn('No API_KEYS set: only keys made with `npm run cli -- keys create` can call the API.');
  }
  const development = app.get(KeyBootstrapService).development;
  // Last, so that a newcomer's terminal ends with where to go and with what (issue 40 item 8). On stderr:
  // stdout stays one JSON object a line for log pipelines, and the keys stay out of the logs.
  if (development !== null) {
    await stdoutWritten();
    process.stderr.write(startupBlock(base, development));
  }
}

/** The start-up's last words on the embedded default without API_KEYS: the console's address and the development keys. */
export function startupBlock(base: string, keys: DevelopmentKeys): string {
  return (
    [
      '',
      '  Audit trail is ready.',
      '',
      `  Console:                  ${base}/console`,
      `  Development key:          ${keys.key}`,
      '                            (account "dev": ingest, read, admin)',
      `  Development operator key: ${keys.operatorKey}`,
      '                            (account "system": every account)',
      '',
      `  Paste a key into the console. Both are kept in ${keys.files.join(' and ')};`,
      '  set API_KEYS for real keys (these two are then revoked).',
      '',
    ].join('\n') + '\n'
  );
}
