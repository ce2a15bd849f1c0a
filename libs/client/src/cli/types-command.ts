import { writeFileSync, renameSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { AuditTrailClient } from '../client';
import { AuditTrailError } from '../errors';
import { declarationsFor } from '../schema-types/declarations';

/** The environment variable the key is read from, unless --key-env names another. */
export const DEFAULT_KEY_ENV = 'AUDIT_TRAIL_API_KEY';

export const USAGE = `Usage: audit-trail-client types --base-url <url> [--account <accountId>] [--out <file>] [--key-env <NAME>]

Writes the TypeScript types of an account's action schemas (docs/contract.md §19, §20) into <file>
(default audit-events.d.ts): with it in a program, recorder.record() and client.events.append() take
only events that an enforced schema accepts. The key (admin of the account, or operator) is read from
the environment variable ${DEFAULT_KEY_ENV} (or the one --key-env names), never from the command line;
--account defaults to the key's own account.`;

/** Where the command writes its words: the summary and the errors (never the key). */
export interface Output {
  out: (line: string) => void;
  err: (line: string) => void;
}

/**
 * `audit-trail-client types …`: reads the account's latest schemas (GET /v1/accounts/:id/schemas) and
 * writes the declaration file (written to a temporary file, then renamed: a half-written file never
 * replaces a good one). Resolves with the process's exit code: 0 written, 1 the service refused or
 * could not be reached, 2 a wrong command line.
 */
export async function typesCommand(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  output: Output,
  fetchImpl?: typeof fetch,
): Promise<number> {
  let values: { 'base-url'?: string; account?: string; out?: string; 'key-env'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        'base-url': { type: 'string' },
        account: { type: 'string' },
        out: { type: 'string' },
        'key-env': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    // parseArgs names the unknown option, never its value: a key typed as --key=… is not repeated.
    output.err(`${error instanceof Error ? error.message.split('.')[0] : 'wrong arguments'}.\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    output.out(USAGE);
    return 0;
  }
  const baseUrl = values['base-url'];
  if (!baseUrl || !/^https?:\/\/[^\s]+$/.test(baseUrl)) {
    output.err(`--base-url must be the service's http(s) address.\n\n${USAGE}`);
    return 2;
  }
  const keyEnv = values['key-env'] ?? DEFAULT_KEY_ENV;
  const apiKey = env[keyEnv];
  if (!apiKey) {
    output.err(`Put the key (admin of the account, or operator) in the environment variable ${keyEnv}.`);
    return 2;
  }
  const file = values.out ?? 'audit-events.d.ts';
  const client = new AuditTrailClient({ baseUrl, apiKey, fetch: fetchImpl });
  try {
    const accountId = values.account ?? (await client.accounts.me()).accountId;
    const schemas = await client.schemas.list(accountId);
    const text = declarationsFor(schemas, { accountId, baseUrl: new URL(baseUrl).origin, at: new Date() });
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, text);
    renameSync(temporary, file);
    const live = schemas.filter((s) => s.schema !== null);
    const enforced = live.filter((s) => s.mode === 'enforce').length;
    const deleted = schemas.length - live.length;
    output.out(
      `Wrote ${file}: ${live.length} action schema(s) of account ${accountId} ` +
        `(${enforced} enforce, ${live.length - enforced} warn${deleted > 0 ? `; ${deleted} deleted, left out` : ''}).`,
    );
    return 0;
  } catch (error) {
    if (error instanceof AuditTrailError) {
      output.err(`The service refused: ${error.status} ${error.code}: ${error.message}`);
      return 1;
    }
    output.err(`Could not write the types: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
