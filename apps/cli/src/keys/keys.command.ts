import { Client } from 'pg';
import { apiKeyPrefix, generateApiKey } from '@app/auth/api-key';
import { registerApiKey } from '@app/auth/key-registration';
import { ACCOUNT_NAME, parseScopes as scopesOf, Scope } from '@app/common/config/app-config';
import { ExitCode } from '../exit-code';
import { Io } from '../io';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

interface KeyRow {
  id: string;
  prefix: string;
  scopes: string[];
  created_at: Date;
  revoked_at: Date | null;
  account: string;
}

/** `keys create|list|revoke`, straight on DATABASE_URL (the service's schema must be migrated). */
export async function keysCommand(
  sub: string | undefined,
  options: { account?: string; scopes?: string; target?: string },
  io: Io,
): Promise<ExitCode> {
  const url = io.env.DATABASE_URL;
  if (!url) throw new UsageError('set DATABASE_URL to the service database (postgres://…)');
  const client = new Client({
    connectionString: url,
    connectionTimeoutMillis: 5000,
    application_name: 'audit-trail-cli',
  });
  await client.connect();
  try {
    switch (sub) {
      case 'create':
        return await create(client, requireAccount(options.account), parseScopes(options.scopes ?? 'ingest+read'), io);
      case 'list':
        return await list(client, requireAccount(options.account), io);
      case 'revoke':
        return await revoke(client, options.target, options.account, io);
      case undefined:
      default:
        throw new UsageError(`unknown keys command '${sub ?? ''}': create, list or revoke`);
    }
  } finally {
    await client.end();
  }
}

function requireAccount(account: string | undefined): string {
  if (!account || !ACCOUNT_NAME.test(account))
    throw new UsageError('--account <name> is required: 1-64 characters of [A-Za-z0-9._-]');
  return account;
}

export function parseScopes(text: string): Scope[] {
  const scopes = scopesOf(text);
  if (scopes === null) throw new UsageError('--scopes is ingest, read or ingest+read');
  return scopes;
}

async function create(client: Client, account: string, scopes: Scope[], io: Io): Promise<ExitCode> {
  const key = generateApiKey();
  let id: string;
  await client.query('BEGIN');
  try {
    ({ keyId: id } = await registerApiKey(async (sql, params) => (await client.query(sql, params)).rows, {
      account,
      key,
      scopes,
    }));
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
  io.out(`Created key ${id} for account '${account}' (scopes ${scopes.join('+')}, prefix ${apiKeyPrefix(key)}).\n`);
  io.out(`${key}\n`);
  io.out('This is the only time the key is shown: only its SHA-256 digest is stored.\n');
  return ExitCode.Ok;
}

async function list(client: Client, account: string, io: Io): Promise<ExitCode> {
  const { rows } = await client.query<KeyRow>(
    `SELECT k.id, k.prefix, k.scopes, k.created_at, k.revoked_at, a.name AS account
       FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE a.name = $1 ORDER BY k.created_at, k.id`,
    [account],
  );
  if (rows.length === 0) io.out(`No keys for account '${account}'.\n`);
  for (const r of rows) io.out(`${describeKey(r)}\n`);
  return ExitCode.Ok;
}

/** By exact id, or by prefix when exactly one active key has it (optionally within --account). */
async function revoke(
  client: Client,
  target: string | undefined,
  account: string | undefined,
  io: Io,
): Promise<ExitCode> {
  if (!target || target.length < 4 || target.length > 64)
    throw new UsageError('keys revoke <key id or prefix> [--account <name>]');
  if (account !== undefined) requireAccount(account);
  const { rows } = await client.query<KeyRow>(
    `SELECT k.id, k.prefix, k.scopes, k.created_at, k.revoked_at, a.name AS account
       FROM api_keys k JOIN accounts a ON a.id = k.account_id
      WHERE (k.id = $1 OR k.prefix = $1) AND ($2::text IS NULL OR a.name = $2) AND k.revoked_at IS NULL`,
    [target, account ?? null],
  );
  if (rows.length !== 1) {
    io.err(
      rows.length === 0
        ? `No active key has the id or prefix '${target}'.\n`
        : `'${target}' matches ${rows.length} active keys; give the key id:\n${rows.map(describeKey).join('\n')}\n`,
    );
    return ExitCode.Failed;
  }
  const key = rows[0]!;
  await client.query(`UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`, [key.id]);
  io.out(
    `Revoked ${key.id} (${key.prefix}…) of account '${key.account}'. Running services stop accepting it within seconds.\n`,
  );
  return ExitCode.Ok;
}

function describeKey(r: KeyRow): string {
  const state = r.revoked_at ? `revoked ${r.revoked_at.toISOString()}` : 'active';
  return `${r.id}  ${r.prefix}…  ${r.scopes.join('+')}  created ${r.created_at.toISOString()}  ${state}  (account '${r.account}')`;
}
