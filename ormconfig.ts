import { DataSource } from 'typeorm';
import { dataSourceOptions } from './libs/database/src/data-source-options';

/**
 * For the TypeORM CLI (`npm run migration:run`, `typeorm migration:generate`): the same options
 * the app uses, against DATABASE_URL. The app itself migrates at start.
 */
const url = process.env.DATABASE_URL;
if (!url) throw new Error('Set DATABASE_URL to use the TypeORM CLI.');
export default new DataSource(dataSourceOptions({ url, poolSize: 2 }));
