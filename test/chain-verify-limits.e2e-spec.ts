import { request as httpRequest, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { ChainVerificationService } from '../apps/api/src/verification/chain-verification.service';
import { WindowInspector } from '../apps/api/src/verification/window-inspector';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

/** How a long whole-chain verification is kept in bounds: one at a time per account here, and none for nobody. */
describe('whole-chain verification limits', () => {
  let t: TestApp;
  let chainId: string;
  let inspector: WindowInspector;
  const N = 40;

  beforeAll(async () => {
    // Windows of one position, hashed in-process: a walk of N windows, each observable.
    t = await startTestApp({ verifyPageSize: 1, verifyWorkers: 0, verifyConcurrency: 1 });
    for (let i = 1; i <= N; i++) {
      chainId = (
        await t
          .http()
          .post('/v1/events')
          .set(...bearer(KEYS.acme))
          .send({ actor: 'alice', action: 'doc.read', chain: 'long', context: { i } })
          .expect(201)
      ).body.data.chain.id;
    }
    inspector = t.app.get(WindowInspector);
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => {
    await t.close();
  });

  const until = async (condition: () => boolean): Promise<void> => {
    while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
  };

  /** Holds every window read until `open()`. */
  function gateWindows(): { open: () => void; reads: () => number } {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const inspect = inspector.inspect.bind(inspector);
    const spy = jest.spyOn(inspector, 'inspect').mockImplementation(async (request) => {
      await gate;
      return inspect(request);
    });
    return { open, reads: () => spy.mock.calls.length };
  }

  it('answers 429 RATE_LIMITED with Retry-After while the account already runs VERIFY_CONCURRENCY walks; others may walk', async () => {
    const { open, reads } = gateWindows();
    const first = t
      .http()
      .get(`/v1/chain/${chainId}/verify`)
      .set(...bearer(KEYS.acme))
      .then((r) => r);
    await until(() => reads() > 0); // the first walk is under way
    const refused = await t
      .http()
      .get(`/v1/chain/${chainId}/verify`)
      .set(...bearer(KEYS.acme))
      .expect(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body.error).toMatchObject({ code: 'RATE_LIMITED', details: { limit: 1 } });
    // Another account's walk is not counted against this one (its answer is a 404: the chain is not its).
    await t
      .http()
      .get(`/v1/chain/${chainId}/verify`)
      .set(...bearer(KEYS.globex))
      .expect(404);
    open();
    expect((await first).body.data).toMatchObject({ valid: true, checkedEvents: N });
    expect(
      (
        await t
          .http()
          .get(`/v1/chain/${chainId}/verify`)
          .set(...bearer(KEYS.acme))
          .expect(200)
      ).body.data.valid,
    ).toBe(true);
  });

  it('stops walking when the client closes the connection', async () => {
    const { open, reads } = gateWindows();
    const verify = jest.spyOn(t.app.get(ChainVerificationService), 'verify');
    const server = t.app.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const client = httpRequest({
        port,
        host: '127.0.0.1',
        path: `/v1/chain/${chainId}/verify`,
        headers: { Authorization: `Bearer ${KEYS.acme}` },
      });
      client.on('error', () => undefined);
      client.end();
      await until(() => verify.mock.calls.length > 0);
      client.destroy();
      const clientGone = verify.mock.calls[0]![2]!;
      await until(() => clientGone.aborted);
      open();
      await expect(verify.mock.results[0]!.value).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
      expect(reads()).toBeLessThan(N / 4);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
