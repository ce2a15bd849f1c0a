import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DatabaseEndpoint } from './database-endpoint';
import { dataSourceOptions } from './data-source-options';
import { runMigrations } from './migrate';
import { REPOSITORIES } from './repositories';

@Global()
@Module({ providers: [DatabaseEndpoint], exports: [DatabaseEndpoint] })
class DatabaseEndpointModule {}

/** Every repository and the TransactionRunner, injectable anywhere. */
@Global()
@Module({ providers: REPOSITORIES, exports: REPOSITORIES })
class RepositoriesModule {}

/** TypeORM on PostgreSQL (DATABASE_URL) or the embedded default; migrations run at start. */
@Module({
  imports: [
    DatabaseEndpointModule,
    TypeOrmModule.forRootAsync({
      inject: [DatabaseEndpoint],
      useFactory: async (endpoint: DatabaseEndpoint) => dataSourceOptions(await endpoint.open()),
      dataSourceFactory: async (options) => {
        const dataSource = await new DataSource(options!).initialize();
        await runMigrations(dataSource);
        return dataSource;
      },
    }),
    RepositoriesModule,
  ],
})
export class DatabaseModule {}
