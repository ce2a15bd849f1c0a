import { DataSource } from 'typeorm';
import { apiKeyPrefix, generateApiKey } from '@app/auth/api-key';
import { KeyRegistrationRepositories, registerApiKey } from '@app/auth/key-registration';
import { ACCOUNT_NAME, ACCOUNT_NAME_TEXT, parseScopes as scopesOf, Scope } from '@app/common/config/app-config';
import { dataSourceOptions } from '@app/database/data-source-options';
import { AccountsRepository } from '@app/database/repositories/accounts.repository';
import { ApiKeyListingRow, ApiKeysRepository } from '@app/database/repositories/api-keys.repository';
import { TransactionRunner } from '@app/database/transaction-runner';
import { ExitCode } from '../exit-code';
import { Io } from '../io';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The service's repositories, over the CLI's own one-connection DataSource. */
interface KeyStore extends KeyRegistrationRepositories {
  transactions: TransactionRunner;
}

/** `keys create|list|revoke`, straight on DATABASE_URL (the service's schema must be migrated). */
export async function keysCommand(
  sub: string | undefined,
  options: { account?: string; scopes?: string; target?: string },
  io: Io,
): Promise<ExitCode> {
  const url = io.env.DATABASE_URL;
  if (!url) throw new UsageError('set DATABASE_URL to the service database (postgres://…)');
  const dataSource = await new DataSource(
    dataSourceOptions({ url, poolSize: 1, applicationName: 'audit-trail-cli' }),
  ).initialize();
  const store: KeyStore = {
    transactions: new TransactionRunner(dataSource),
    accounts: new AccountsRepository(dataSource),
    apiKeys: new ApiKeysRepository(dataSource),
  };
  try {
    switch (sub) {
      case 'create':
        return await create(store, requireAccount(options.account), parseScopes(options.scopes ?? 'ingest+read'), io);
      case 'list':
        return await list(store, requireAccount(options.account), io);
      case 'revoke':
        return await revoke(store, options.target, options.account, io);
      case undefined:
      default:
        throw new UsageError(`unknown keys command '${sub ?? ''}': create, list or revoke`);
    }
  } finally {
    await dataSource.destroy();
  }
}

function requireAccount(account: string | undefined): string {
  if (!account || !ACCOUNT_NAME.test(account))
    throw new UsageError(`--account <name> is required: ${ACCOUNT_NAME_TEXT}`);
  return account;
}

export function parseScopes(text: string): Scope[] {
  const scopes = scopesOf(text);
  if (scopes === null) throw new UsageError('--scopes is ingest, read or ingest+read');
  return scopes;
}

async function create(store: KeyStore, account: string, scopes: Scope[], io: Io): Promise<ExitCode> {
  const key = generateApiKey();
  const { keyId: id } = await store.transactions.run((tx) => registerApiKey(store, { account, key, scopes }, tx));
  io.out(`Created key ${id} for account '${account}' (scopes ${scopes.join('+')}, prefix ${apiKeyPrefix(key)}).\n`);
  io.out(`${key}\n`);
  io.out('This is the only time the key is shown: only its SHA-256 digest is stored.\n');
  return ExitCode.Ok;
}

async function list(store: KeyStore, account: string, io: Io): Promise<ExitCode> {
  const rows = await store.apiKeys.listByAccountName(account);
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
  await store.apiKeys.revoke(key.id);
  io.out(
    `Revoked ${key.id} (${key.prefix}…) of account '${key.account}'. Running services stop accepting it within seconds.\n`,
  );
  return ExitCode.Ok;
}

function describeKey(r: ApiKeyListingRow): string {
  const state = r.revokedAt ? `revoked ${r.revokedAt.toISOString()}` : 'active';
  return `${r.id}  ${r.prefix}…  ${r.scopes.join('+')}  created ${r.createdAt.toISOString()}  ${state}  (account '${r.account}')`;
}
