/*
 * A migrated embedded database, made once per e2e run on the embedded default: PGlite's initdb
 * takes about 7 s, a copy of its files 0.1 s, and the embedded suites start about a hundred apps.
 * Each suite's fresh data directory starts as a copy of this one (test-app.ts, freshDatabase), so
 * every suite still gets a database of its own, migrated by the migrations of this checkout.
 * Run: node -r ts-node/register/transpile-only -r tsconfig-paths/register test/support/embedded-template.ts <dataDir>
 */
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../libs/database/src/data-source-options';
import { EmbeddedPostgres } from '../../libs/database/src/embedded-postgres';
import { runMigrations } from '../../libs/database/src/migrate';

async function makeTemplate(dataDir: string): Promise<void> {
  const db = await EmbeddedPostgres.start(dataDir, (message) => process.stderr.write(`${message}\n`));
  try {
    const dataSource = await new DataSource(dataSourceOptions({ url: db.url, poolSize: 1 })).initialize();
    await runMigrations(dataSource).finally(() => dataSource.destroy());
  } finally {
    await db.stop();
  }
}

makeTemplate(process.argv[2]!).then(
  () => process.exit(0),
  (error: Error) => {
    process.stderr.write(`${error.stack ?? error.message}\n`);
    process.exit(1);
  },
);
