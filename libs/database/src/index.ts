export * from './data-source-options';
export * from './database-endpoint';
export * from './database.module';
export * from './embedded-postgres';
export * from './entities';
export * from './migrate';
export * from './migrations';
