import { loadOrCreateKey } from './witness-key';
import { ConfigError, keyConfigFrom, witnessConfigFrom } from './witness-config';
import { formatCosignatureVerifierKey } from '@app/hashing';
import { StateFileError, StateStore } from './state-store';
import { Witness } from './witness';
import { createWitnessServer } from './witness-server';

/*
 * A standalone c2sp.org/tlog-witness (docs/contract.md §18), configured from the environment
 * (witness-config.ts). `npm run witness` serves; `npm run witness -- key` prints the verifier key.
 */
async function main(args: readonly string[]): Promise<void> {
  const [command = 'serve'] = args;
  if (command === 'key') {
    const { name, keyFile } = keyConfigFrom(process.env);
    const { privateKey } = await loadOrCreateKey(keyFile);
    process.stdout.write(`${formatCosignatureVerifierKey(name, privateKey)}\n`);
    return;
  }
  if (command !== 'serve') throw new ConfigError(`unknown command '${command}': serve (the default) or key`);
  const config = witnessConfigFrom(process.env);
  const key = await loadOrCreateKey(config.keyFile);
  if (key.created) process.stderr.write(`made a new witness key in ${config.keyFile}\n`);
  if (key.warning) process.stderr.write(`warning: ${key.warning}\n`);
  const witness = new Witness({
    name: config.name,
    privateKey: key.privateKey,
    logs: config.logs,
    state: await StateStore.open(config.stateFile),
    warn: (message) => process.stderr.write(`warn: ${message}\n`),
  });
  const server = createWitnessServer(witness);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  const address = server.address();
  const where = typeof address === 'object' && address ? `${address.address}:${address.port}` : String(address);
  process.stdout.write(`witness ${config.name} listening on http://${where}/add-checkpoint\n`);
  process.stdout.write(`verifier key: ${witness.verifierKey}\n`);
  process.stdout.write(`witnessing: ${[...config.logs.keys()].join(', ')}\n`);
  const stop = (): void => {
    server.close(() => process.exit(0));
    server.closeIdleConnections();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const known = error instanceof ConfigError || error instanceof StateFileError;
  process.stderr.write(`error: ${error instanceof Error && known ? error.message : String(error)}\n`);
  process.exitCode = 2;
});
