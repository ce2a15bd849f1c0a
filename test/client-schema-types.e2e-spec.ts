import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ts from 'typescript';
import { AuditTrailClient } from '@audit-trail/client';
import { adminBootstrapKeys, ADMIN_KEYS } from './support/admin-keys';
import { clientOf, listening } from './support/client-app';
import { KEYS, startTestApp, TestApp } from './support/test-app';

/*
 * `audit-trail-client types` (docs/contract.md §20; issue 42 item 5) against the real service: the
 * command, built as the package ships it (dist/cli.cjs), reads an account's schemas and writes their
 * TypeScript types; the TypeScript compiler then refuses exactly the record() and append() calls
 * whose event an enforced schema refuses, naming the member, and the service refuses the same event.
 */
describe('the client: TypeScript types from action schemas', () => {
  const root = join(__dirname, '..');
  const dir = mkdtempSync(join(tmpdir(), 'client-schema-types-'));
  const cli = join(dir, 'cli.cjs');
  let t: TestApp;
  let baseUrl: string;
  let admin: AuditTrailClient;
  let acmeId: string;

  /** Runs the command as a person would, the key in the environment only (not blocking: the service is in this process). */
  const types = (args: string[], env: Record<string, string>) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [cli, 'types', ...args],
        { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8', timeout: 30_000 },
        (_error, stdout, stderr) => resolve({ status: child.exitCode, stdout, stderr }),
      );
    });

  beforeAll(async () => {
    // dist/cli.cjs as libs/client/build.mjs makes it (buildCli), here into a temporary folder.
    execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { buildCli } = await import(${JSON.stringify(join(root, 'libs', 'client', 'build.mjs'))}); await buildCli(${JSON.stringify(cli)});`,
      ],
      { stdio: 'inherit' },
    );
    t = await startTestApp({ bootstrapKeys: adminBootstrapKeys() });
    baseUrl = await listening(t);
    admin = clientOf(baseUrl, ADMIN_KEYS.acmeAdmin);
    acmeId = (await admin.accounts.me()).accountId;
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes types that make the compiler refuse exactly the events an enforced schema refuses', async () => {
    const amount = { type: 'object', properties: { amount: { type: 'number' }, currency: { enum: ['EUR', 'USD'] } } };
    await admin.schemas.put(acmeId, 'invoice.approve', {
      mode: 'enforce',
      schema: {
        type: 'object',
        properties: { context: { ...amount, required: ['amount'], additionalProperties: false } },
        required: ['context'],
      },
    });
    await admin.schemas.put(acmeId, 'invoice.*', {
      mode: 'enforce',
      schema: {
        properties: { context: { type: 'object', required: ['who'], properties: { who: { type: 'string' } } } },
      },
    });
    // The longest pattern applies: under invoice.draft.* (warn) an event is free-form, as on the service.
    await admin.schemas.put(acmeId, 'invoice.draft.*', { mode: 'warn', schema: { required: ['resource'] } });
    await admin.schemas.put(acmeId, 'doc.read', { mode: 'enforce', schema: { required: ['resource'] } });
    await admin.schemas.remove(acmeId, 'doc.read');

    const out = join(dir, 'audit-events.d.ts');
    const run = await types(['--base-url', baseUrl, '--out', out], { AUDIT_TRAIL_API_KEY: ADMIN_KEYS.acmeAdmin });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    expect(run.stdout).toBe(
      `Wrote ${out}: 3 action schema(s) of account ${acmeId} (2 enforce, 1 warn; 1 deleted, left out).\n`,
    );
    expect(readFileSync(out, 'utf8')).not.toContain(ADMIN_KEYS.acmeAdmin);

    const calls = [
      `await recorder.record({ actor: 'alice', action: 'invoice.approve', context: { amount: 10, currency: 'EUR' } });`,
      `await recorder.record({ actor: 'alice', action: 'invoice.approve', context: { amount: 'ten' } });`,
      `await recorder.record({ actor: 'alice', action: 'invoice.line.add', resource: 'invoice:42', context: { who: 'bob' } });`,
      `await recorder.record({ actor: 'alice', action: 'invoice.draft.save', context: { anything: [1] } });`,
      `await recorder.record({ actor: 'alice', action: 'doc.read' });`,
      `await recorder.record({ actor: 'alice', action: 'other.thing', context: { free: true } });`,
      `await client.events.append({ actor: 'alice', action: 'invoice.line.add', context: {} });`,
      `await recorder.record({ actor: 'alice', action: dynamicAction, context: { amount: 'ten' } });`,
    ];
    const first = 6;
    const usage = join(dir, 'usage.ts');
    writeFileSync(
      usage,
      [
        `import { AuditTrailClient } from '@audit-trail/client';`,
        `const client = new AuditTrailClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k' });`,
        `const recorder = client.recorder();`,
        `declare const dynamicAction: string;`,
        `export async function run(): Promise<void> {`,
        ...calls.map((c) => `  ${c}`),
        `}`,
        '',
      ].join('\n'),
    );
    // The service agrees: it refuses those two events and takes the others. Asked before the
    // compiler runs: it blocks this process (the service's too) for seconds, beyond the server's
    // keep-alive timeout, and a pooled connection both sides' timers then close at once is reset.
    const client = clientOf(baseUrl, KEYS.acme);
    await expect(
      client.events.append({ actor: 'alice', action: 'invoice.approve', context: { amount: 'ten' } }),
    ).rejects.toMatchObject({ status: 400, code: 'VALIDATION_ERROR', fields: [{ field: 'context.amount' }] });
    await expect(
      client.events.append({ actor: 'alice', action: 'invoice.line.add', context: {} }),
    ).rejects.toMatchObject({ status: 400, fields: [{ field: 'context.who' }] });
    await client.events.append({ actor: 'alice', action: 'invoice.approve', context: { amount: 10, currency: 'EUR' } });
    await client.events.append({ actor: 'alice', action: 'invoice.line.add', context: { who: 'bob' } });
    await client.events.append({ actor: 'alice', action: 'invoice.draft.save', context: { anything: [1] } });
    await client.events.append({ actor: 'alice', action: 'doc.read' });
    const diagnostics = compile([usage, out]);
    // Exactly the two bad calls, each naming its member.
    expect(diagnostics.map((d) => d.line)).toEqual([first + 1, first + 6]);
    expect(diagnostics[0]!.text).toMatch(/amount/);
    expect(diagnostics[0]!.text).toMatch(/'string' is not assignable to type 'number'/);
    expect(diagnostics[1]!.text).toMatch(/^Property 'who' is missing/);
  }, 120_000);

  it('says in words what is wrong, never printing the key', async () => {
    const denied = await types(['--base-url', baseUrl, '--out', join(dir, 'x.d.ts')], {
      AUDIT_TRAIL_API_KEY: KEYS.acmeReadOnly,
    });
    expect(denied.status).toBe(1);
    expect(denied.stderr).toMatch(/^The service refused: 403 /);
    const other = await types(['--base-url', baseUrl, '--account', acmeId], { MY_KEY: ADMIN_KEYS.globexAdmin });
    expect(other.status).toBe(2);
    expect(other.stderr).toContain('AUDIT_TRAIL_API_KEY');
    const named = await types(
      ['--base-url', baseUrl, '--account', acmeId, '--key-env', 'MY_KEY', '--out', join(dir, 'y.d.ts')],
      {
        MY_KEY: ADMIN_KEYS.globexAdmin,
      },
    );
    expect(named.status).toBe(1);
    expect(named.stderr).toMatch(/^The service refused: 404 NOT_FOUND/);
    const onLine = await types(['--base-url', baseUrl, `--key=${ADMIN_KEYS.acmeAdmin}`], {});
    expect(onLine.status).toBe(2);
    for (const run of [denied, other, named, onLine])
      for (const key of [KEYS.acmeReadOnly, ADMIN_KEYS.globexAdmin, ADMIN_KEYS.acmeAdmin])
        expect(run.stdout + run.stderr).not.toContain(key);
  });

  /** The type errors of `files` under the repository's compiler options (the client from its sources). */
  function compile(files: string[]): { line: number; text: string }[] {
    const config = ts.readConfigFile(join(root, 'tsconfig.json'), (path) => ts.sys.readFile(path));
    const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
    const program = ts.createProgram(files, { ...parsed.options, noEmit: true, types: ['node'] });
    const usage = program.getSourceFile(files[0]!)!;
    const found = [...program.getSyntacticDiagnostics(usage), ...program.getSemanticDiagnostics(usage)];
    const declarations = program.getSemanticDiagnostics(program.getSourceFile(files[1]!));
    expect(declarations.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
    return found.map((d) => ({
      line: usage.getLineAndCharacterOfPosition(d.start ?? 0).line + 1,
      text: [d, ...(d.relatedInformation ?? [])]
        .map((x) => ts.flattenDiagnosticMessageText(x.messageText, '\n'))
        .join('\n'),
    }));
  }
});
