import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { openSink } from '../open-sink';
import { Receiver, sampleEvents, sampleTarget } from '../sink.fixture';
import type { DestinationKind, Sink, SinkTarget } from '../sink';

const batch = { id: 'msg_1', events: sampleEvents(2) };
const signal = () => new AbortController().signal;
const secrets = {
  webhookSecrets: [`whsec_${Buffer.alloc(32, 7).toString('base64')}`],
  token: 'splunk-token-abcdef',
  apiKey: 'datadog-key-abcdef',
};

describe('classification of answers', () => {
  const receiver = new Receiver();
  let base: string;
  const sinks: Sink[] = [];
  const open = (kind: DestinationKind, overrides: Partial<SinkTarget> = {}) => {
    const sink = openSink(sampleTarget(kind, base, { secrets, ...overrides }));
    sinks.push(sink);
    return sink;
  };
  const answer = (status: number, headers: Record<string, string> = {}, body = '') => {
    receiver.respond = (_, response) => {
      response.writeHead(status, headers).end(body);
    };
  };

  beforeAll(async () => {
    base = await receiver.start();
  });
  afterEach(async () => {
    await Promise.all(sinks.splice(0).map((sink) => sink.close()));
  });
  afterAll(() => receiver.stop());

  it.each([
    [200, { ok: true }],
    [204, { ok: true }],
    [500, { ok: false, status: 500, action: 'retry', retryAfterMs: null }],
    [503, { ok: false, status: 503, action: 'retry' }],
    [408, { ok: false, status: 408, action: 'retry' }],
    [400, { ok: false, status: 400, action: 'retry' }],
    [401, { ok: false, status: 401, action: 'retry' }],
    [410, { ok: false, status: 410, action: 'disable' }],
  ])('webhook: %d → %j', async (status, expected) => {
    answer(status);
    await expect(open('webhook').deliver(batch, signal())).resolves.toMatchObject(expected);
  });

  it('429 with Retry-After in seconds retries after that long', async () => {
    answer(429, { 'retry-after': '12' });
    await expect(open('splunk_hec').deliver(batch, signal())).resolves.toEqual({
      ok: false,
      status: 429,
      message: 'HTTP 429',
      action: 'retry',
      retryAfterMs: 12_000,
    });
  });

  it('429 with Retry-After as an HTTP date retries at that time', async () => {
    answer(429, { 'retry-after': new Date(Date.now() + 60_000).toUTCString() });
    const delivery = await open('datadog').deliver(batch, signal());
    expect(delivery).toMatchObject({ ok: false, status: 429, action: 'retry' });
    expect(!delivery.ok && delivery.retryAfterMs).toBeGreaterThan(55_000);
    expect(!delivery.ok && delivery.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it('does not follow a redirect: a 302 is a failure that says so', async () => {
    answer(302, { location: `${base}/elsewhere` });
    await expect(open('webhook').deliver(batch, signal())).resolves.toMatchObject({
      ok: false,
      status: 302,
      action: 'retry',
      message: expect.stringContaining('redirect not followed') as string,
    });
    expect(receiver.requests.some((request) => request.path === '/elsewhere')).toBe(false);
  });

  it.each([
    [429, 'retry'],
    [502, 'retry'],
    [503, 'retry'],
    [504, 'retry'],
    [400, 'pause'],
    [401, 'pause'],
    [500, 'pause'],
    [410, 'pause'],
    [302, 'pause'],
  ])('otlp: %d → %s', async (status, action) => {
    answer(status);
    await expect(open('otlp').deliver(batch, signal())).resolves.toMatchObject({ ok: false, status, action });
  });

  it('quotes the start of the answer, at most 200 characters, on one line', async () => {
    answer(400, {}, `bad\nrequest ${'x'.repeat(70_000)}`);
    const delivery = await open('webhook').deliver(batch, signal());
    expect(delivery).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^HTTP 400: bad request x+…$/) as string,
    });
    expect(!delivery.ok && delivery.message.length).toBe(200);
  });

  it('never puts a credential in a message, even when the receiver echoes it', async () => {
    receiver.respond = (request, response) => {
      response.writeHead(401).end(JSON.stringify(request.headers));
    };
    const headers = { 'x-custom-auth': 'custom-header-secret' };
    for (const kind of ['webhook', 'splunk_hec', 'datadog', 'otlp'] as const) {
      const delivery = await open(kind, { headers, timeoutSeconds: 5 }).deliver(batch, signal());
      const message = delivery.ok ? '' : delivery.message;
      for (const secret of [
        'splunk-token-abcdef',
        'datadog-key-abcdef',
        'custom-header-secret',
        secrets.webhookSecrets[0]!,
      ]) {
        expect(message).not.toContain(secret);
      }
    }
  });

  it('times out: status null, retry', async () => {
    receiver.respond = () => undefined; // never answers
    const started = Date.now();
    await expect(open('webhook', { timeoutSeconds: 1 }).deliver(batch, signal())).resolves.toEqual({
      ok: false,
      status: null,
      message: 'timed out after 1 s',
      action: 'retry',
      retryAfterMs: null,
    });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('stops when the engine aborts', async () => {
    receiver.respond = () => undefined;
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await expect(open('otlp').deliver(batch, controller.signal)).resolves.toMatchObject({
      ok: false,
      status: null,
      message: 'aborted',
      action: 'retry',
    });
  });

  it('a refused connection is a network error: status null, retry', async () => {
    const closed = await unusedPort();
    const sink = openSink(sampleTarget('webhook', `http://127.0.0.1:${closed}`, { secrets }));
    sinks.push(sink);
    const delivery = await sink.deliver(batch, signal());
    expect(delivery).toMatchObject({
      ok: false,
      status: null,
      action: 'retry',
      message: expect.stringContaining('ECONNREFUSED') as string,
    });
  });
});

describe('outbound address policy', () => {
  const receiver = new Receiver();
  let port: number;

  beforeAll(async () => {
    port = Number(new URL(await receiver.start()).port);
  });
  afterAll(() => receiver.stop());

  it.each([
    ['webhook', 'http://127.0.0.1:PORT/'],
    ['webhook', 'http://localhost:PORT/'],
    ['splunk_hec', 'http://[::ffff:127.0.0.1]:PORT/'],
    ['otlp', 'http://169.254.169.254/latest/meta-data/'],
    ['datadog', 'https://[fd00:ec2::254]/'],
    ['syslog', 'syslog://127.0.0.1:PORT'],
    ['nats', 'nats://localhost:PORT/audit'],
  ] as const)('refuses %s to %s without allowPrivateNetworks, before sending anything', async (kind, url) => {
    const sut = openSink(
      sampleTarget(kind, url.replace('PORT', String(port)), {
        allowPrivateNetworks: false,
        secrets,
        timeoutSeconds: 2,
      }),
    );
    try {
      await expect(sut.deliver(batch, signal())).resolves.toEqual({
        ok: false,
        status: null,
        message: expect.stringContaining('is not allowed') as string,
        action: 'retry',
        retryAfterMs: null,
      });
    } finally {
      await sut.close();
    }
    expect(receiver.requests).toHaveLength(0);
  });
});

async function unusedPort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
