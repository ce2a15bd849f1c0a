import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DatabaseLocator } from './database-locator';
import { dataSourceOptions } from './data-source-options';
import { DatabasePoolGauge } from './pool-gauge';
import { runMigrations } from './migrate';
import { REPOSITORIES } from './repositories';

@Global()
@Module({ providers: [DatabaseLocator], exports: [DatabaseLocator] })
class DatabaseLocatorModule {}

/** Every repository and the TransactionRunner, injectable anywhere. */
@Global()
@Module({ providers: REPOSITORIES, exports: REPOSITORIES })
class RepositoriesModule {}

/** TypeORM on PostgreSQL (DATABASE_URL) or the embedded default; migrations run at start. */
@Module({
  imports: [
    DatabaseLocatorModule,
    TypeOrmModule.forRootAsync({
      inject: [DatabaseLocator],
      useFactory: async (database: DatabaseLocator) => dataSourceOptions(await database.open()),
      dataSourceFactory: async (options) => {
        const dataSource = await new DataSource(options!).initialize();
        await runMigrations(dataSource);
        return dataSource;
      },
    }),
    RepositoriesModule,
  ],
  providers: [DatabasePoolGauge],
})
export class DatabaseModule {}
