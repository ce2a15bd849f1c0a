// The one-shot `migrate` service of docker/docker-compose.yml, in the API's image: as the schema's
// owner (DATABASE_URL, its password in PGPASSWORD) it runs the pending migrations (under the same
// advisory lock as the service), then makes SERVICE_ROLE (password SERVICE_ROLE_PASSWORD) a login
// role that owns nothing and holds exactly the grants of least-privilege.sql
// (libs/database/sql/least-privilege.sql, docs/verification.md §7). The API then connects as that
// role with DATABASE_MIGRATIONS=check. Exit 0 when done; the API's service waits for it.
'use strict';
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { Client } = require('pg');
const { DataSource } = require('typeorm');
const lib = join(__dirname, 'dist/apps/api/libs/database/src');
const { dataSourceOptions } = require(join(lib, 'data-source-options'));
const { runMigrations } = require(join(lib, 'migrate'));
const { setUpServiceRole } = require(join(lib, 'least-privilege'));

async function main() {
  const url = process.env.DATABASE_URL;
  const role = process.env.SERVICE_ROLE;
  const password = process.env.SERVICE_ROLE_PASSWORD;
  if (!url || !role || !password)
    throw new Error('set DATABASE_URL (the owner), SERVICE_ROLE and SERVICE_ROLE_PASSWORD');
  const dataSource = await new DataSource(
    dataSourceOptions({ url, poolSize: 1, applicationName: 'audit-trail-migrate' }),
  ).initialize();
  try {
    await runMigrations(dataSource);
  } finally {
    await dataSource.destroy();
  }
  const client = new Client({ connectionString: url, application_name: 'audit-trail-migrate' });
  await client.connect();
  try {
    const script = readFileSync(join(__dirname, 'sql/least-privilege.sql'), 'utf8');
    await setUpServiceRole(client, { role, password, script });
  } finally {
    await client.end();
  }
  console.log(`migrate: schema up to date; role ${role} holds the grants of least-privilege.sql`);
}

main().catch((error) => {
  // The message only: never the connection string or a password.
  console.error(`migrate: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
