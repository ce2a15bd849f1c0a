#!/usr/bin/env node
import { typesCommand, USAGE } from './types-command';

/*
 * The `audit-trail-client` command of the package (package.json's bin; built to dist/cli.cjs):
 * `audit-trail-client types …` writes the TypeScript types of an account's action schemas.
 */
async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  const output = { out: (line: string) => console.log(line), err: (line: string) => console.error(line) };
  if (command === 'types') return typesCommand(rest, process.env, output);
  if (command === '--help' || command === '-h' || command === 'help') {
    output.out(USAGE);
    return 0;
  }
  // The word typed is not repeated: it might be a key pasted in the wrong place.
  output.err(
    `${command === undefined ? 'No command given' : 'Unknown command: the one command is types'}.\n\n${USAGE}`,
  );
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  },
);
