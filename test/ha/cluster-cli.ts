import { HaCluster } from './cluster';

/**
 * `node -r ts-node/register/transpile-only test/ha/cluster-cli.ts`: starts the HA cluster of
 * cluster.ts, prints its endpoints (one JSON line on stdout) and runs until SIGINT or SIGTERM,
 * then tears everything down. For trying the service against it by hand.
 */
async function main(): Promise<void> {
  const cluster = await HaCluster.start({ log: (line) => process.stderr.write(`ha: ${line}\n`) });
  const stop = () => void cluster.stop().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  process.stdout.write(
    `${JSON.stringify({
      DATABASE_URL: cluster.url('rw'),
      DATABASE_READ_URL: cluster.url('ro'),
      nodes: cluster.nodes.map((n) => ({ name: n.name, port: n.pgPort, rest: n.restPort })),
      patronictl: `patronictl -c ${cluster.nodes[0]!.config} list`,
    })}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
