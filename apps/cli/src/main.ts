import { run } from './cli';
import { ExitCode } from './exit-code';

/** The audit trail CLI: offline export verification and API key management. */
run(process.argv.slice(2), {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
})
  .then((code) => {
    process.exitCode = code;
  })
  .catch((error: unknown) => {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = ExitCode.Failed;
  });
