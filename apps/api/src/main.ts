import 'reflect-metadata';
// Only what the port needs to answer is loaded before it answers: the application (Nest and every module
// of the service, seconds of loading on a busy machine) is loaded once something answers 503 meanwhile.
import { loadAppConfig } from '@app/common/config/app-config';
import { listenWhileStarting } from './starting-server';

async function bootstrap(): Promise<void> {
  // The port answers from the start: 503 while the code loads and the database is opened and migrated (minutes
  // for an upgrade of millions of events), so that a load balancer sees a service starting, not one gone.
  const config = loadAppConfig(process.env);
  // (Port 0, a port chosen by the system, has nothing to hold: the application would get another.)
  const starting = config.port === 0 ? null : await listenWhileStarting(config.port, config.host);
  const { startApplication } = await import('./application');
  await startApplication(config, () => starting?.close());
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
