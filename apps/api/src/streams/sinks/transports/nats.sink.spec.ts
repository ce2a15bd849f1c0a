import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { randomBytes } from 'node:crypto';
import { openSink } from '../open-sink';
import { sampleEvents, sampleTarget } from '../sink.fixture';
import type { Sink } from '../sink';

/** The machine's NATS server with JetStream (the test creates and deletes a stream of its own). */
const NATS_URL = process.env.NATS_TEST_SERVER ?? '127.0.0.1:4222';
const signal = () => new AbortController().signal;

describe('nats (JetStream)', () => {
  const name = `SINKS_TEST_${randomBytes(6).toString('hex').toUpperCase()}`;
  const subject = `sinks-test.${name.toLowerCase()}`;
  let nc: Awaited<ReturnType<typeof connect>>;
  let jsm: JetStreamManager;
  let sut: Sink;

  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL });
    jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name, subjects: [subject], duplicate_window: 60_000_000_000 });
  });
  afterEach(() => sut.close());
  afterAll(async () => {
    await jsm.streams.delete(name);
    await nc.close();
  });

  it('publishes each event to the URL subject with Nats-Msg-Id = event id; a re-sent batch adds nothing', async () => {
    sut = openSink(sampleTarget('nats', `nats://${NATS_URL}/${subject}`, { format: 'ocsf' }));
    const events = sampleEvents(5);
    const batch = { id: 'b1', events };
    await expect(sut.deliver(batch, signal())).resolves.toEqual({ ok: true });
    await expect(sut.deliver(batch, signal())).resolves.toEqual({ ok: true });

    expect((await jsm.streams.info(name)).state.messages).toBe(5);
    for (const [i, event] of events.entries()) {
      const stored = await jsm.streams.getMessage(name, { seq: i + 1 });
      expect(stored?.subject).toBe(subject);
      expect(stored?.header.get('Nats-Msg-Id')).toBe(event.id);
      expect(stored?.json<{ metadata: { uid: string } }>().metadata.uid).toBe(event.id);
    }
  });

  it('fails (retry, status null) when no stream takes the subject', async () => {
    sut = openSink(sampleTarget('nats', `nats://${NATS_URL}/${subject}-nobody`, { timeoutSeconds: 2 }));
    await expect(sut.deliver({ id: 'b2', events: sampleEvents(1) }, signal())).resolves.toMatchObject({
      ok: false,
      status: null,
      action: 'retry',
      message: `no JetStream stream answered on ${subject}-nobody (no stream takes this subject, or JetStream is off)`,
    });
  });

  it('fails (retry, status null) when the server does not answer', async () => {
    sut = openSink(sampleTarget('nats', 'nats://127.0.0.1:1/audit', { timeoutSeconds: 2 }));
    await expect(sut.deliver({ id: 'b3', events: sampleEvents(1) }, signal())).resolves.toMatchObject({
      ok: false,
      status: null,
      action: 'retry',
    });
  });
});
