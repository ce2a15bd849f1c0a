import { DataSourceOptions } from 'typeorm';
// Relative, not @app/common: ormconfig.ts (the TypeORM CLI, migration-check.ts) loads this without the path aliases.
import { choosesHost, parseDatabaseUrl } from '../../common/src/config/database-url';
import { CONNECTION_SETTINGS } from './connection-settings';
import { hostChoosingClient } from './host-choice';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';

export interface ConnectionSettings {
  url: string;
  /** Connections in the pool; the embedded database takes one at a time. */
  poolSize: number;
  /** How the connections name themselves in pg_stat_activity. */
  applicationName?: string;
}

/**
 * The one definition of how we talk to PostgreSQL, shared by the app and ormconfig.ts. A URL pg
 * cannot read as it is (several hosts, target_session_attrs=read-write: docs/contract.md §21) is
 * given to TypeORM as its first host's, and the pool's connections choose their host themselves.
 */
export function dataSourceOptions({ url, poolSize, applicationName }: ConnectionSettings): DataSourceOptions {
  const parsed = parseDatabaseUrl(url);
  const choosing = choosesHost(parsed);
  return {
    type: 'postgres',
    url: choosing ? parsed.urlFor(parsed.hosts[0]!) : url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'typeorm_migrations',
    synchronize: false,
    migrationsRun: false,
    // TypeORM would print a failed statement with its parameters (event bodies) as text: errors are
    // logged once, as JSON without SQL or parameters, by the exception filter.
    logging: false,
    extra: {
      max: poolSize,
      ...CONNECTION_SETTINGS,
      application_name: applicationName ?? 'audit-trail-service',
      ...(choosing ? { Client: hostChoosingClient(parsed) } : {}),
    },
  };
}
