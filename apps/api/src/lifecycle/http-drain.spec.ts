import { Agent, createServer, IncomingMessage, request, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { HttpDrain } from './http-drain';

interface Reply {
  status?: number;
  connection?: string;
  error?: string;
}

describe('HttpDrain', () => {
  let server: Server;
  let port: number;
  let drain: HttpDrain;
  /** Requests the handler holds until the test lets them go. */
  let held: ServerResponse[];
  const agents: Agent[] = [];

  beforeEach(async () => {
    held = [];
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      if (req.url === '/hold') held.push(res);
      else res.end('ok');
    });
    drain = new HttpDrain(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterEach(async () => {
    agents.forEach((agent) => agent.destroy());
    server.closeAllConnections();
    if (server.listening) await new Promise((resolve) => server.close(resolve));
  });

  const keepAlive = (): Agent => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(agent);
    return agent;
  };
  const get = (path: string, agent: Agent): Promise<Reply> =>
    new Promise((resolve) => {
      const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
      });
      req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
      req.end();
    });
  const until = async (condition: () => boolean): Promise<void> => {
    while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
  };

  it('answers a request in progress with Connection: close, refuses new connections, and ends when it is out', async () => {
    const agent = keepAlive();
    const inProgress = get('/hold', agent);
    await until(() => held.length === 1);
    expect(drain.inFlight).toBe(1);

    const stopped = drain.stop(5000);
    expect((await get('/', keepAlive())).error).toBe('ECONNREFUSED');
    held[0]!.end('done');
    expect(await inProgress).toEqual({ status: 200, connection: 'close' });
    expect(await stopped).toBe(0);
  });

  it('answers a request that arrives on a keep-alive connection idle at the stop', async () => {
    const agent = keepAlive();
    expect(await get('/', agent)).toEqual({ status: 200, connection: 'keep-alive' });

    const stopped = drain.stop(5000);
    // Node's own server.close() would have closed this idle connection at once.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await get('/', agent)).toEqual({ status: 200, connection: 'close' });
    expect(await stopped).toBe(0);
  });

  it('cuts what is still open at the deadline', async () => {
    const agent = keepAlive();
    const never = get('/hold', agent);
    await until(() => held.length === 1);

    const started = Date.now();
    expect(await drain.stop(200)).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect((await never).error).toBe('ECONNRESET');
  });
});
