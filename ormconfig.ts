import { DataSource } from 'typeorm';
import { dataSourceOptions } from './libs/database/src/data-source-options';

/**
 * For the TypeORM CLI and `npm run migration:check`: the same options the app uses, against
 * DATABASE_URL. The app itself migrates at start. A schema change is an entity change plus a
 * migration: `npx typeorm-ts-node-commonjs migration:generate -d ormconfig.ts <path>` on a migrated
 * database writes one, which is then read, given the schema's constraint names and added to
 * MIGRATIONS. Generating is safe because the entities describe the schema exactly:
 * `npm run migration:check` (run by CI after `migration:run`) fails when they do not.
 */
const url = process.env.DATABASE_URL;
if (!url) throw new Error('Set DATABASE_URL to use the TypeORM CLI.');
export default new DataSource(dataSourceOptions({ url, poolSize: 2 }));
