import { AuditTrailClient, RecorderMetric } from '@audit-trail/client';
import { startChildInstance } from './support/child-instance';
import { checkExactlyOnce, StoredEvent } from './support/client-app';
import { freshDatabase, KEYS, usingPostgres } from './support/test-app';

/** The service in a process of its own that the test kills and starts again: a database they share (PostgreSQL). */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;

/*
 * docs/contract.md §20: the service SIGKILLed mid-stream (a batch may have been stored with its answer lost,
 * or cut in its transaction), down for a while, then started again: the recorder retries with the same
 * keys and backs off, and nothing is lost or stored twice, each chain in the producers' order. 5,000
 * events from 4 producers (issue 38's 100,000 from 8 is a bench-machine figure), an outage of a few
 * seconds plus the restart's own time.
 */
describeOnPostgres('the recorder across a service outage (PostgreSQL)', () => {
  it('the service is killed and restarted mid-stream: nothing lost, nothing twice, no retry storm', async () => {
    const database = await freshDatabase();
    const env = {
      DATABASE_URL: database.url!,
      API_KEYS: `acme:${KEYS.acme}`,
      RATE_LIMIT_PER_SECOND: '0',
      METRICS_PORT: '0',
      LOG_LEVEL: 'warn',
    };
    let instance = await startChildInstance(env);
    let current = instance.url;
    // The client keeps one base URL; a restarted instance listens elsewhere, so requests are sent to the current one.
    const route: typeof fetch = (url, init) =>
      fetch((url instanceof Request ? url.url : url.toString()).replace('http://audit.test', current), init);
    const client = new AuditTrailClient({ baseUrl: 'http://audit.test', apiKey: KEYS.acme, fetch: route });
    const retries: { at: number; metric: RecorderMetric }[] = [];
    const backoff = { baseMs: 100, capMs: 2000 };
    const recorder = client.recorder({
      lingerMs: 20,
      maxBatchEvents: 100,
      backoff,
      metrics: (metric) => metric.kind === 'retried' && retries.push({ at: Date.now(), metric }),
    });
    const outage = { from: 0, to: 0 };
    try {
      const producing = Promise.all(
        [0, 1, 2, 3].map(async (producer) => {
          for (let n = 0; n < 1250; n++) {
            await recorder.record({
              actor: `p${producer}`,
              action: 'client.outage',
              chain: `outage-${producer}`,
              context: { producer, n },
            });
            if (n % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
          }
        }),
      );
      while (recorder.counters.sent < 1500) await new Promise((resolve) => setTimeout(resolve, 5));
      outage.from = Date.now();
      await instance.kill();
      await new Promise((resolve) => setTimeout(resolve, 3000));
      instance = await startChildInstance(env);
      current = instance.url;
      outage.to = Date.now();
      await producing;
      await recorder.flush();
      const events: StoredEvent[] = [];
      for await (const e of client.events.list({ action: 'client.outage', limit: 200 })) events.push(e);
      expect(checkExactlyOnce(events, [1250, 1250, 1250, 1250])).toEqual({
        stored: 5000,
        duplicates: [],
        missing: [],
        outOfOrder: [],
      });
      // One batch in flight at a time, waiting full jitter under min(2 s, 100 ms · 2^n): a few retries a
      // second at first, one a second on average after; never a storm.
      const during = retries.filter((r) => r.at >= outage.from && r.at <= outage.to + 1000).length;
      const seconds = (outage.to - outage.from) / 1000;
      expect(during).toBeGreaterThan(0);
      expect(during).toBeLessThanOrEqual(8 + 2 * seconds);
      console.log(
        `outage of ${seconds.toFixed(1)} s: ${during} retries (${recorder.counters.retried} in all), 5,000 stored once`,
      );
    } finally {
      await recorder.close({ timeoutMs: 1000 });
      await instance.stop();
    }
  }, 180_000);
});
