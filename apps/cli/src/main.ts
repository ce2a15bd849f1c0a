import { run } from './cli';
import { ExitCode } from './exit-code';

/** The audit trail CLI: offline export verification, API key management, bulk ingest. */
run(process.argv.slice(2), {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
  errIsTTY: process.stderr.isTTY === true,
})
  .then((code) => {
    process.exitCode = code;
  })
  .catch((error: unknown) => {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = ExitCode.Failed;
  });
