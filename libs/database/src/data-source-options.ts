import { DataSourceOptions } from 'typeorm';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';

export interface ConnectionSettings {
  url: string;
  /** Connections in the pool; the embedded database takes one at a time. */
  poolSize: number;
  /** How the connections name themselves in pg_stat_activity. */
  applicationName?: string;
}

/** The one definition of how we talk to PostgreSQL, shared by the app and ormconfig.ts. */
export function dataSourceOptions({ url, poolSize, applicationName }: ConnectionSettings): DataSourceOptions {
  return {
    type: 'postgres',
    url,
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
      connectionTimeoutMillis: 5000,
      application_name: applicationName ?? 'audit-trail-service',
    },
  };
}
