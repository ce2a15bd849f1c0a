import dataSource from './ormconfig';
import { schemaDrift } from './libs/database/src/schema-drift';

/**
 * `npm run migration:check`: the entities must describe the migrated database on DATABASE_URL
 * exactly. Quiet and exit 0 when they do; otherwise prints what differs (the statements
 * `migration:generate` would write, and any definition the schema builder does not compare) and
 * exits 1. CI runs it after `npm run migration:run` on a fresh database.
 */
async function main(): Promise<number> {
  await dataSource.initialize();
  try {
    const drift = await schemaDrift(dataSource);
    if (drift.length === 0) return 0;
    console.error(`The entities differ from the migrated schema (${drift.length}):\n${drift.join('\n')}`);
    return 1;
  } finally {
    await dataSource.destroy();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
