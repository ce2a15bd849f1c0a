import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { addCheckpointBody, backoffMs, postAddCheckpoint, readAddCheckpointAnswer } from './witness-client';

const NOTE = 'audit-trail/checkpoint-log\n2\nAAAA\n\n— audit-trail abcd\n';

describe('addCheckpointBody', () => {
  const sut = addCheckpointBody;

  it('is the old size, one base64 hash a line, a blank line and the note', () => {
    const proof = [Buffer.alloc(32, 1), Buffer.alloc(32, 2)];
    expect(sut(1, proof, NOTE)).toBe(
      `old 1\n${proof[0]!.toString('base64')}\n${proof[1]!.toString('base64')}\n\n${NOTE}`,
    );
    expect(sut(0, [], NOTE)).toBe(`old 0\n\n${NOTE}`);
  });

  it('refuses a negative size and more than 63 hashes', () => {
    expect(() => sut(-1, [], NOTE)).toThrow(RangeError);
    expect(() =>
      sut(
        1,
        Array.from({ length: 64 }, () => Buffer.alloc(32)),
        NOTE,
      ),
    ).toThrow(RangeError);
  });
});

describe('readAddCheckpointAnswer', () => {
  const sut = readAddCheckpointAnswer;

  it('reads a 200 as its cosignature lines', () => {
    expect(sut(200, 'text/plain', '— w1 AAAA\n— w1 BBBB\n')).toEqual({
      kind: 'cosigned',
      lines: ['— w1 AAAA\n', '— w1 BBBB\n'],
    });
    expect(sut(200, 'text/plain', '').kind).toBe('failed');
    expect(sut(200, 'text/plain', '— w1 AAAA').kind).toBe('failed');
  });

  it('reads a 409 of text/x.tlog.size as the witness size, whatever the parameters', () => {
    expect(sut(409, 'text/x.tlog.size', '12\n')).toEqual({ kind: 'size', size: 12 });
    expect(sut(409, 'Text/X.Tlog.Size; charset=utf-8', '0\n')).toEqual({ kind: 'size', size: 0 });
    expect(sut(409, 'text/x.tlog.size', '012\n').kind).toBe('failed');
    expect(sut(409, 'text/x.tlog.size', 'twelve').kind).toBe('failed');
  });

  it('reads other 4xx as refusals (a 409 of text/plain too: a fork), with control characters stripped', () => {
    expect(sut(409, 'text/plain', 'fork\n')).toEqual({ kind: 'refused', status: 409, message: 'fork' });
    expect(sut(422, 'text/plain', 'bad\u001b[31m proof')).toEqual({
      kind: 'refused',
      status: 422,
      message: 'bad [31m proof',
    });
    expect(sut(403, null, '').kind).toBe('refused');
  });

  it('reads 5xx, 408 and 429 as failures worth retrying', () => {
    for (const status of [500, 502, 503, 408, 429]) expect(sut(status, 'text/plain', 'x').kind).toBe('failed');
  });
});

describe('backoffMs', () => {
  const sut = backoffMs;

  it('doubles the interval with each failure, up to the maximum', () => {
    expect([0, 1, 2, 3, 4].map((n) => sut(n, 1000, 5000))).toEqual([0, 1000, 2000, 4000, 5000]);
    expect(sut(10_000, 1000, 300_000)).toBe(300_000);
  });
});

describe('postAddCheckpoint', () => {
  let server: Server;
  let url: string;
  let answer: (res: import('node:http').ServerResponse) => void;
  let received: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received = `${req.method} ${req.url} ${Buffer.concat(chunks).toString('utf8')}`;
        answer(res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('POSTs the body to <url>/add-checkpoint and reads the answer', async () => {
    answer = (res) => res.writeHead(409, { 'Content-Type': 'text/x.tlog.size' }).end('3\n');
    await expect(postAddCheckpoint(url, 'old 0\n\nx', 1000)).resolves.toEqual({ kind: 'size', size: 3 });
    expect(received).toBe('POST /add-checkpoint old 0\n\nx');
  });

  it('gives up after the timeout', async () => {
    answer = () => undefined;
    const outcome = await postAddCheckpoint(url, 'old 0\n\nx', 100);
    expect(outcome.kind).toBe('failed');
  });

  it('reports a connection refused as a failure', async () => {
    const outcome = await postAddCheckpoint('http://127.0.0.1:1', 'old 0\n\nx', 1000);
    expect(outcome.kind).toBe('failed');
  });

  it('follows no redirect: a 3xx is a failure', async () => {
    answer = (res) => res.writeHead(302, { Location: 'http://127.0.0.1:1/add-checkpoint' }).end();
    await expect(postAddCheckpoint(url, 'old 0\n\nx', 1000)).resolves.toMatchObject({ kind: 'failed' });
  });
});

/**
 * A hostile witness's answer (issue 37 item 9, threat model P7): at most 64 KiB of it is read. A
 * longer one is a failure (retried later), its connection closed at once, nothing more buffered.
 */
describe('postAddCheckpoint against an answer without end', () => {
  let server: Server;
  let url: string;
  /** Bytes the witness managed to send, and whether its connection was closed, per request. */
  let sent = 0;
  let closed: Promise<void>;
  let serve: (res: import('node:http').ServerResponse) => void;
  const COSIGNATURE = Buffer.from('— w1 AAAA\n'.repeat(6_000)); // ~66 KB of lines that look right
  const MB_50 = 50 * 1024 * 1024;

  /** Writes `COSIGNATURE` over and over, as fast as the client reads, until `total` bytes or a close. */
  const stream = (res: import('node:http').ServerResponse, total: number) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    const more = () => {
      while (sent < total && !res.destroyed) {
        sent += COSIGNATURE.length;
        if (!res.write(COSIGNATURE)) return void res.once('drain', more);
      }
      if (sent >= total) res.end();
    };
    more();
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      sent = 0;
      closed = new Promise((done) => res.on('close', done));
      req.resume();
      req.on('end', () => serve(res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('a 50 MB answer is a failure after 64 KiB; the connection is closed long before the 50 MB are sent', async () => {
    serve = (res) => stream(res, MB_50);
    const outcome = await postAddCheckpoint(url, 'old 0\n\nx', 10_000);
    expect(outcome).toEqual({ kind: 'failed', message: 'HTTP 200 with an answer over 65536 bytes' });
    await closed;
    expect(sent).toBeLessThan(MB_50 / 5);
  });

  it('an answer that never ends is a failure as soon as it passes 64 KiB, not at the timeout', async () => {
    serve = (res) => stream(res, Infinity);
    const started = Date.now();
    const outcome = await postAddCheckpoint(url, 'old 0\n\nx', 10_000);
    expect(outcome.kind).toBe('failed');
    expect(Date.now() - started).toBeLessThan(2_000);
    await closed;
  });

  it('an answer that trickles and never ends is a failure at the timeout, its connection closed', async () => {
    serve = (res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.write('— w1 AAAA\n');
    };
    const outcome = await postAddCheckpoint(url, 'old 0\n\nx', 300);
    expect(outcome.kind).toBe('failed');
    await closed;
  });
});
