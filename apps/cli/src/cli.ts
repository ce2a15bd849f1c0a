import { parseArgs } from 'node:util';
import { MAX_BATCH_EVENTS } from '@app/common/limits';
import { ExitCode } from './exit-code';
import { ingestCommand, ingestOptions } from './ingest/ingest.command';
import { Io } from './io';
import { keysCommand, UsageError } from './keys/keys.command';
import { verifyExportCommand } from './verify-export/verify-export.command';
import { verifyConsistencyCommand, verifyProofCommand } from './verify-proof/verify-proof.command';

export const USAGE = `Usage:
  npm run cli -- verify-export <export.json> --checkpoint <file>... --key <verifier key or file>...
      Re-hashes every event of a JSON export (GET /v1/events/export?format=json), checks positions,
      links and time order in each chain, and holds the export against each signed checkpoint.
      Only a signature confirms: positions no checkpoint confirms (all without --checkpoint) are
      NOT CONFIRMED. Exit 0: every event confirmed and nothing contradicts; 1: tampering found or
      something not confirmed; 2: bad input.
      With --witness <cosignature/v1 key>... [--quorum k] --witnessed <bundle.json>..., a checkpoint
      confirms only when one of the bundles shows it cosigned by at least k (default: all) of them.
  npm run cli -- verify-export <export.json> --internal-only
      The file's own consistency alone (hashes, links, positions, order): exit 0 when it agrees
      with itself. No signature is checked: it does not show that the service wrote the events.
  npm run cli -- verify-proof <proof.json> --checkpoint <file> --key <verifier key or file> | --internal-only
      Checks an inclusion proof (GET /v1/events/:id/proof, saved as is) against a signed checkpoint
      of the same chain and size: the event is in the tree whose root the service signed.
      With --witness <cosignature/v1 key>... [--quorum k] --witnessed <bundle.json> (GET
      /v1/chain/:chainId/checkpoint/witnessed, saved as is), that checkpoint must also be in a log
      checkpoint cosigned by at least k (default: all) of those witnesses; otherwise NOT CONFIRMED.
  npm run cli -- verify-consistency <proof.json> --old <file> --new <file> --key <verifier key or file> | --internal-only
      Checks a consistency proof (GET /v1/chain/:chainId/consistency?from=M&to=N, saved as is)
      between two signed checkpoints of sizes M and N: the chain only grew between them.
      Exit codes as for verify-export: without a checkpoint (or --old, --new) the proof is held
      against the roots its own file names and is NOT CONFIRMED (exit 1); --internal-only (no
      checkpoint, no key) asks for that alone, exit 0 when consistent, no signature checked.
  npm run cli -- keys create --account <name> [--scopes ingest+read] [--name <name>]
  npm run cli -- keys list --account <name>
  npm run cli -- keys revoke <key id or prefix> [--account <name>]
      Key management on DATABASE_URL. A new key is printed once; only its SHA-256 digest is stored.
      Scopes: ingest, read, admin, operator (operator only for the account 'system'), joined by +.
  npm run cli -- ingest <file.ndjson> --url <base> --key <key> [--batch-size 100] [--skip-invalid]
      Appends one event per line (a POST /v1/events body; blank lines ignored) through POST /v1/events/batch,
      in batches of --batch-size (1-${MAX_BATCH_EVENTS}) lines. Resumable: run the same command (same --batch-size) again
      after a crash or Ctrl-C and nothing is appended twice. The key may also come from AUDIT_TRAIL_KEY.
      Exit 0: everything appended; 1: some lines rejected (without --skip-invalid it stops at the first);
      2: bad usage, unreadable file, or the server refused the key or could not be reached.
`;

/** The whole CLI as a function of its arguments, for main.ts and for tests. */
export async function run(argv: readonly string[], io: Io): Promise<ExitCode> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'verify-export': {
        const { values, positionals } = parseArgs({
          args: rest,
          options: {
            checkpoint: { type: 'string', multiple: true },
            key: { type: 'string', multiple: true },
            'internal-only': { type: 'boolean' },
            witness: { type: 'string', multiple: true },
            quorum: { type: 'string' },
            witnessed: { type: 'string', multiple: true },
          },
          allowPositionals: true,
        });
        if (positionals.length !== 1) throw new UsageError('verify-export takes exactly one export file');
        return verifyExportCommand(
          {
            exportPath: positionals[0]!,
            checkpointPaths: values.checkpoint ?? [],
            keys: values.key ?? [],
            internalOnly: values['internal-only'] === true,
            witnesses: values.witness,
            quorum: values.quorum,
            witnessedPaths: values.witnessed,
          },
          io,
        );
      }
      case 'verify-proof': {
        const { values, positionals } = parseArgs({
          args: rest,
          options: {
            checkpoint: { type: 'string' },
            key: { type: 'string' },
            'internal-only': { type: 'boolean' },
            witness: { type: 'string', multiple: true },
            quorum: { type: 'string' },
            witnessed: { type: 'string' },
          },
          allowPositionals: true,
        });
        if (positionals.length !== 1) throw new UsageError('verify-proof takes exactly one proof file');
        return verifyProofCommand(
          {
            proofPath: positionals[0]!,
            checkpointPath: values.checkpoint,
            key: values.key,
            internalOnly: values['internal-only'] === true,
            witnesses: values.witness,
            quorum: values.quorum,
            witnessedPath: values.witnessed,
          },
          io,
        );
      }
      case 'verify-consistency': {
        const { values, positionals } = parseArgs({
          args: rest,
          options: {
            old: { type: 'string' },
            new: { type: 'string' },
            key: { type: 'string' },
            'internal-only': { type: 'boolean' },
          },
          allowPositionals: true,
        });
        if (positionals.length !== 1) throw new UsageError('verify-consistency takes exactly one proof file');
        return verifyConsistencyCommand(
          {
            proofPath: positionals[0]!,
            oldPath: values.old,
            newPath: values.new,
            key: values.key,
            internalOnly: values['internal-only'] === true,
          },
          io,
        );
      }
      case 'keys': {
        const { values, positionals } = parseArgs({
          args: rest,
          options: { account: { type: 'string' }, scopes: { type: 'string' }, name: { type: 'string' } },
          allowPositionals: true,
        });
        const [sub, target, ...extra] = positionals;
        if (extra.length > 0 || (target !== undefined && sub !== 'revoke'))
          throw new UsageError(`unexpected argument '${extra[0] ?? target}'`);
        return await keysCommand(sub, { ...values, target }, io);
      }
      case 'ingest': {
        const { values, positionals } = parseArgs({
          args: rest,
          options: {
            url: { type: 'string' },
            key: { type: 'string' },
            'batch-size': { type: 'string' },
            'skip-invalid': { type: 'boolean' },
          },
          allowPositionals: true,
        });
        if (positionals.length > 1) throw new UsageError('ingest takes exactly one NDJSON file');
        return await ingestCommand(ingestOptions(positionals[0], values, io.env), io);
      }
      case 'help':
      case '--help':
      case '-h':
        io.out(USAGE);
        return ExitCode.Ok;
      case undefined:
      default:
        throw new UsageError(command === undefined ? 'no command given' : `unknown command '${command}'`);
    }
  } catch (error) {
    if (error instanceof UsageError || isParseArgsError(error)) {
      io.err(`${(error as Error).message}\n\n${USAGE}`);
      return ExitCode.BadInput;
    }
    throw error;
  }
}

function isParseArgsError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS');
}
