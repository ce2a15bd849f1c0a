import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/common';
import { DatabaseLocator } from './database-locator';
import { dataSourceOptions } from './data-source-options';
import { DatabasePoolGauge } from './pool-gauge';
import { checkMigrations, runMigrations, SchemaNotReadyError } from './migrate';
import { ReadReplica } from './read-replica';
import { REPOSITORIES } from './repositories';

@Global()
@Module({ providers: [DatabaseLocator], exports: [DatabaseLocator] })
class DatabaseLocatorModule {}

/** Every repository, the TransactionRunner and the ReadReplica (DATABASE_READ_URL), injectable anywhere. */
@Global()
@Module({ providers: [...REPOSITORIES, ReadReplica], exports: [...REPOSITORIES, ReadReplica] })
class RepositoriesModule {}

/** TypeORM on PostgreSQL (DATABASE_URL) or the embedded default; migrations run (or are checked: DATABASE_MIGRATIONS) at start. */
@Module({
  imports: [
    DatabaseLocatorModule,
    TypeOrmModule.forRootAsync({
      inject: [DatabaseLocator, AppConfig],
      useFactory: async (database: DatabaseLocator, config: AppConfig) => ({
        ...dataSourceOptions(await database.open()),
        migrationsRun: config.databaseMigrations === 'run',
        // An unreachable database is retried (9 times, 3 s apart); a schema this role cannot migrate or serve is not.
        toRetry: (error: unknown) => !(error instanceof SchemaNotReadyError),
      }),
      // TypeORM's own switch, migrationsRun, is honoured here (under runMigrations' advisory lock), not by TypeORM.
      dataSourceFactory: async (options) => {
        const dataSource = await new DataSource({ ...options!, migrationsRun: false }).initialize();
        try {
          await (options!.migrationsRun ? runMigrations : checkMigrations)(dataSource);
        } catch (error) {
          await dataSource.destroy().catch(() => undefined);
          throw error;
        }
        return dataSource;
      },
    }),
    RepositoriesModule,
  ],
  providers: [DatabasePoolGauge],
})
export class DatabaseModule {}
