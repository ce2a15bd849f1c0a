import { DataSource } from 'typeorm';
import { KeysService } from '@app/auth/keys/keys.service';
import { AppError } from '@app/common/errors';
import { ACCOUNT_NAME, ACCOUNT_NAME_TEXT, parseScopes as scopesOf, Scope } from '@app/common/config/app-config';
import { MAX_KEY_NAME_LENGTH, MAX_PAGE_SIZE } from '@app/common/limits';
import { dataSourceOptions } from '@app/database/data-source-options';
import { AccountsRepository } from '@app/database/repositories/accounts.repository';
import { ApiKeyRow, ApiKeysRepository } from '@app/database/repositories/api-keys.repository';
import { TransactionRunner } from '@app/database/transaction-runner';
import { ExitCode } from '../exit-code';
import { Io } from '../io';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The service's KeysService (every rule about keys, shared with the HTTP API), over the CLI's own connection. */
interface KeyStore {
  keys: KeysService;
  accounts: AccountsRepository;
  apiKeys: ApiKeysRepository;
}

/** `keys create|list|revoke`, straight on DATABASE_URL (the service's schema must be migrated). */
export async function keysCommand(
  sub: string | undefined,
  options: { account?: string; scopes?: string; name?: string; target?: string },
  io: Io,
): Promise<ExitCode> {
  const url = io.env.DATABASE_URL;
  if (!url) throw new UsageError('set DATABASE_URL to the service database (postgres://…)');
  const dataSource = await new DataSource(
    dataSourceOptions({ url, poolSize: 1, applicationName: 'audit-trail-cli' }),
  ).initialize();
  const accounts = new AccountsRepository(dataSource);
  const apiKeys = new ApiKeysRepository(dataSource);
  const store: KeyStore = {
    keys: new KeysService(new TransactionRunner(dataSource), accounts, apiKeys),
    accounts,
    apiKeys,
  };
  try {
    switch (sub) {
      case 'create':
        return await create(
          store,
          requireAccount(options.account),
          parseScopes(options.scopes ?? 'ingest+read'),
          keyName(options.name),
          io,
        );
      case 'list':
        return await list(store, requireAccount(options.account), io);
      case 'revoke':
        return await revoke(store, options.target, options.account, io);
      case undefined:
      default:
        throw new UsageError(`unknown keys command '${sub ?? ''}': create, list or revoke`);
    }
  } catch (error) {
    // The rules KeysService enforces (e.g. operator only for `system`) are the user's mistake here.
    if (error instanceof AppError) throw new UsageError(error.message);
    throw error;
  } finally {
    await dataSource.destroy();
  }
}

function requireAccount(account: string | undefined): string {
  if (!account || !ACCOUNT_NAME.test(account))
    throw new UsageError(`--account <name> is required: ${ACCOUNT_NAME_TEXT}`);
  return account;
}

function keyName(name: string | undefined): string {
  if (name === undefined) return 'cli';
  if (name.length < 1 || [...name].length > MAX_KEY_NAME_LENGTH || /\p{Cc}/u.test(name))
    throw new UsageError(`--name is 1-${MAX_KEY_NAME_LENGTH} characters without control characters`);
  return name;
}

export function parseScopes(text: string): Scope[] {
  const scopes = scopesOf(text);
  if (scopes === null) throw new UsageError('--scopes is ingest, read, admin or operator, joined by +');
  return scopes;
}

async function create(store: KeyStore, account: string, scopes: Scope[], name: string, io: Io): Promise<ExitCode> {
  const accountId = await store.keys.ensureAccount(account);
  const { key, secret } = await store.keys.create('cli', accountId, { name, scopes, expiresAt: null });
  io.out(`Created key ${key.id} for account '${account}' (scopes ${scopes.join('+')}, prefix ${key.prefix}).\n`);
  io.out(`${secret}\n`);
  io.out('This is the only time the key is shown: only its SHA-256 digest is stored.\n');
  return ExitCode.Ok;
}

async function list(store: KeyStore, account: string, io: Io): Promise<ExitCode> {
  const found = await store.accounts.findByName(account);
  const rows: ApiKeyRow[] = [];
  if (found) {
    let cursor: string | undefined;
    do {
      const page = await store.keys.list('cli', found.id, MAX_PAGE_SIZE, cursor);
      rows.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  }
  if (rows.length === 0) io.out(`No keys for account '${account}'.\n`);
  for (const r of rows) io.out(`${describeKey(r)}\n`);
  return ExitCode.Ok;
}

/** By exact id, or by prefix when exactly one active key has it (optionally within --account). */
async function revoke(
  store: KeyStore,
  target: string | undefined,
  account: string | undefined,
  io: Io,
): Promise<ExitCode> {
  if (!target || target.length < 4 || target.length > 64)
    throw new UsageError('keys revoke <key id or prefix> [--account <name>]');
  if (account !== undefined) requireAccount(account);
  const rows = await store.apiKeys.findActiveByIdOrPrefix(target, account ?? null);
  if (rows.length !== 1) {
    io.err(
      rows.length === 0
        ? `No active key has the id or prefix '${target}'.\n`
        : `'${target}' matches ${rows.length} active keys; give the key id:\n${rows.map(describeKey).join('\n')}\n`,
    );
    return ExitCode.Failed;
  }
  const key = rows[0]!;
  await store.keys.revoke('cli', key.accountId, key.id);
  io.out(
    `Revoked ${key.id} (${key.prefix}…) of account '${key.account}'. Running services stop accepting it within seconds.\n`,
  );
  return ExitCode.Ok;
}

function describeKey(r: ApiKeyRow): string {
  const state = r.revokedAt
    ? `revoked ${r.revokedAt.toISOString()}`
    : r.expiresAt
      ? `${r.expiresAt.getTime() > Date.now() ? 'expires' : 'expired'} ${r.expiresAt.toISOString()}`
      : 'active';
  return `${r.id}  ${r.prefix}…  ${r.scopes.join('+')}  created ${r.createdAt.toISOString()}  ${state}  (account '${r.account}')`;
}
