/*
 * An embedded database in a process of its own, on the DATA_DIR given as argument: a second
 * instance for the one-instance guard's tests. Prints `started` once it serves, stops and exits 0
 * on SIGTERM; a refused start prints the reason on stderr and exits 3.
 * Run: node -r ts-node/register/transpile-only test/support/embedded-instance.ts <dataDir>
 */
import { EmbeddedPostgres } from '../../libs/database/src/embedded-postgres';

EmbeddedPostgres.start(process.argv[2]!, () => undefined).then(
  (db) => {
    process.once('SIGTERM', () => void db.stop().then(() => process.exit(0)));
    process.stdout.write('started\n');
  },
  (error: Error) => {
    process.stderr.write(`${error.message}\n`);
    process.exit(3);
  },
);
