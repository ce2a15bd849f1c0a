import { AuditTrailClient } from '@audit-trail/client';

/**
 * An application that records through a durable recorder until it is killed (test/client-recorder.e2e-spec.ts):
 * argv: base URL, API key, spool directory, chain prefix, producers, events per producer. Each
 * producer records its events in order on its own chain; after each record() resolves it prints
 * `<producer> <n>` (the event is then safe in the spool), and `done` once all are.
 */
async function main(): Promise<void> {
  const [baseUrl = '', apiKey = '', spoolDir = '', prefix = '', producers = '4', each = '1000'] = process.argv.slice(2);
  const recorder = new AuditTrailClient({ baseUrl, apiKey }).recorder({ spoolDir, lingerMs: 20, maxBatchEvents: 100 });
  await Promise.all(
    Array.from({ length: Number(producers) }, async (_, producer) => {
      for (let n = 0; n < Number(each); n++) {
        await recorder.record({
          actor: `producer-${producer}`,
          action: `client.${prefix}`,
          chain: `${prefix}-${producer}`,
          context: { producer, n },
        });
        process.stdout.write(`${producer} ${n}\n`);
      }
    }),
  );
  process.stdout.write('done\n');
  await recorder.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
