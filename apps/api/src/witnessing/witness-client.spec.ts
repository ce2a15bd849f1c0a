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
});
