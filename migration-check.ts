import dataSource from './ormconfig';
import { schemaDrift } from './libs/database/src/schema-drift';

/**
 * `npm run migration:check`: the entities must describe the migrated database on DATABASE_URL
 * exactly, and its functions and triggers must be the declared ones (libs/database/src/schema/functions).
 * Quiet and exit 0 when they are; otherwise prints what differs (the statements `migration:generate`
 * would write, any definition the schema builder does not compare, each function or trigger that
 * differs, is missing or is not declared) and exits 1. CI runs it after `npm run migration:run` on a fresh database.
 */
async function main(): Promise<number> {
  await dataSource.initialize();
  try {
    const drift = await schemaDrift(dataSource);
    if (drift.length === 0) return 0;
    console.error(
      `The entities or the declared functions and triggers differ from the migrated schema (${drift.length}):\n${drift.join('\n')}`,
    );
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
