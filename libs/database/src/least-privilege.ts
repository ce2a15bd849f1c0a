import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { escapeIdentifier, escapeLiteral } from 'pg';
import { asBoolean, asNumber, asString, computed, Selection } from './schema/table';

/** A plain, unquoted PostgreSQL role name (what psql's :"service_role" would otherwise have to quote). */
export const SERVICE_ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
/** Printable ASCII (SASLprep leaves it as it is, so the verifier computed here is the server's), long enough to resist guessing. */
export const SERVICE_ROLE_PASSWORD = /^[\x21-\x7e]{16,256}$/;

/** One connection's queries, as pg's Client makes them (a script of several statements without parameters). */
export interface SqlSession {
  query(text: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

/**
 * libs/database/sql/least-privilege.sql with psql's variables replaced, as
 * `psql -v service_role=… -f least-privilege.sql` would: :"service_role" and :"DBNAME" (psql sets the
 * latter to the connection's database) become quoted identifiers. Any other :"variable" is refused.
 */
export function leastPrivilegeSql(script: string, names: { role: string; database: string }): string {
  const values: Record<string, string> = { service_role: names.role, DBNAME: names.database };
  return script.replace(/:"(\w+)"/g, (whole, variable: string) => {
    const value = values[variable];
    if (value === undefined)
      throw new Error(`least-privilege.sql: unknown variable ${whole} (only :"service_role" and :"DBNAME")`);
    return escapeIdentifier(value);
  });
}

/**
 * The SCRAM-SHA-256 verifier PostgreSQL would store for `password` (RFC 5802, 7677): given as the
 * role's password, the password itself never reaches the server, nor its statement log.
 */
export function scramSha256Verifier(password: string, salt: Buffer = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/**
 * Makes `role` the service's least-privilege role on the session's database, in one transaction,
 * as the schema's owner after the migrations: created (or its password and attributes reset) as a
 * login role with no other power, refused when it owns anything (triggers do not bind an owner),
 * every table privilege it held taken back, then exactly the grants of `script`
 * (least-privilege.sql). Compose's migrate service and the e2e tests both call this.
 */
export async function setUpServiceRole(
  session: SqlSession,
  { role, password, script }: { role: string; password: string; script: string },
): Promise<void> {
  if (!SERVICE_ROLE_NAME.test(role)) throw new Error(`the service role's name must match ${SERVICE_ROLE_NAME}`);
  if (!SERVICE_ROLE_PASSWORD.test(password))
    throw new Error("the service role's password must be 16-256 printable ASCII characters without spaces");
  const name = escapeIdentifier(role);
  await session.query('BEGIN');
  try {
    const whereabouts = computed({
      database: ['current_database()', asString],
      present: ['to_regrole($1) IS NOT NULL', asBoolean],
    });
    const { database, present } = firstRow(whereabouts, await session.query(`SELECT ${whereabouts.sql}`, [role]));
    const attributes = `LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS NOINHERIT PASSWORD ${escapeLiteral(scramSha256Verifier(password))}`;
    await session.query(`${present ? 'ALTER' : 'CREATE'} ROLE ${name} WITH ${attributes}`);
    const owned = await session.query(
      `SELECT ${COUNT.sql} FROM pg_shdepend WHERE refclassid = 'pg_authid'::regclass AND refobjid = $1::regrole AND deptype = 'o'`,
      [role],
    );
    if (firstRow(COUNT, owned).n > 0)
      throw new Error(
        `the role ${role} owns database objects: the service's role must own nothing (docs/verification.md §7)`,
      );
    const memberOf = await session.query(`SELECT ${COUNT.sql} FROM pg_auth_members WHERE member = $1::regrole`, [role]);
    if (firstRow(COUNT, memberOf).n > 0)
      throw new Error(`the role ${role} is a member of other roles: the service's role must hold only its own grants`);
    // Exactly the file's grants: whatever an earlier version granted (a column since dropped from the list) goes.
    await session.query(`REVOKE ALL ON ALL TABLES IN SCHEMA public FROM ${name}`);
    await session.query(`REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM ${name}`);
    await session.query(leastPrivilegeSql(script, { role, database }));
    await session.query('COMMIT');
  } catch (error) {
    await session.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

const COUNT = computed({ n: ['count(*)::int', asNumber] });

/** The first row of a session's answer, decoded by `selection` (the catalog queries above answer exactly one). */
function firstRow<Row>(selection: Selection<Row>, { rows }: { rows: Record<string, unknown>[] }): Row {
  const [row] = rows;
  if (!row) throw new Error('the database answered no row');
  return selection.decode(row);
}
