import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readdirSync, readlinkSync } from 'node:fs';
import { IncomingMessage, ServerResponse } from 'node:http';
import { AddressInfo, connect, Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

/*
 * Issue 26 item 3: a client that stops reading an export is cut (docs/contract.md §8) on both databases,
 * wherever its bytes wait: in the export's pipeline, or already handed to the response and held in
 * the socket's buffer. A raw socket reads only as the test says, so the server's buffers fill as
 * they would for a real stalled client. Run on PostgreSQL and with E2E_EMBEDDED=1 (the spool).
 */

const EVENTS = 1000;
const CHAINS = 4;
/** Base64 of 22,000 random bytes: about 29 KiB of incompressible context, under the 32 KiB limit (docs/contract.md §4). */
const CONTEXT_BYTES = 22_000;
const PER_BATCH = 250; // about 7.2 MiB, under the batch's 8 MiB
const STALL_SECONDS = 1;
/** The answer's last chunk (chunked encoding): a file that ends with it looks complete. */
const LAST_CHUNK = '\r\n0\r\n\r\n';
/** Answers of as many sizes, one small event apart, around what the kernel takes (a `q` has at most 32 terms). */
const SWEEP = 32;
/** The actors of the small events that make the sizes: an answer leaves out the last few of them. */
const TAIL = Array.from({ length: SWEEP - 1 }, (_, i) => `tail-${String(i).padStart(2, '0')}`);

interface RawExport {
  socket: Socket;
  /** The server's side of the request. */
  served: ServerResponse;
  /** Bytes the client has read so far (status line and headers included). */
  received: Buffer[];
  closed: Promise<unknown>;
}

describe('an export whose client stops reading (contract §8, issue 26)', () => {
  let t: TestApp;
  let port: number;
  let query: string;
  const responses = new Map<number, (response: ServerResponse) => void>();
  /** The events' timestamps, oldest first. */
  const timestamps: string[] = [];
  /** The whole answer's size in bytes, headers included (they are the same length every time). */
  let whole: number;

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    // The server's side of each request, found by the client's port.
    t.app.getHttpServer().on('request', (req: IncomingMessage, res: ServerResponse) => {
      responses.get(req.socket.remotePort!)?.(res);
      responses.delete(req.socket.remotePort!);
    });
    port = (t.app.getHttpServer().address() as AddressInfo).port;
    for (let start = 0; start < EVENTS; start += PER_BATCH) {
      const events = Array.from({ length: PER_BATCH }, (_, i) => ({
        actor: 'stall',
        action: 'big.context',
        chain: `stall-${(start + i) % CHAINS}`,
        context: { blob: randomBytes(CONTEXT_BYTES).toString('base64') },
      }));
      const res = await t
        .http()
        .post('/v1/events/batch')
        .set(...bearer(KEYS.acme))
        .send({ events })
        .expect(201);
      timestamps.push(...(res.body.data as { timestamp: string }[]).map((e) => e.timestamp));
    }
    timestamps.sort();
    query = `format=json&after=${timestamps[0]}&before=${timestamps[timestamps.length - 1]}`;
    const read = await openExport();
    read.socket.on('data', (chunk: Buffer) => read.received.push(chunk));
    await read.closed;
    const answer = Buffer.concat(read.received);
    expect(answer.toString('latin1', answer.length - LAST_CHUNK.length)).toBe(LAST_CHUNK);
    whole = answer.length;
  }, 120_000);
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => {
    Object.assign(t.config, { exportsPerAccount: 2, exportsPerInstance: 2, exportStallTimeoutSeconds: STALL_SECONDS });
  });

  it('is cut when it stops after the first chunk, while appends go on; its spool file is gone', async () => {
    const read = await openStalled(query);
    expect(read.received[0]!.toString('latin1')).toMatch(/^HTTP\/1\.1 200 /);

    // Appends go on while the client reads nothing (the embedded pool has one connection).
    const until = Date.now() + 4 * STALL_SECONDS * 1000;
    while (Date.now() < until) {
      await t
        .http()
        .post('/v1/events')
        .set(...bearer(KEYS.acme))
        .send({ actor: 'stall', action: 'append.during.stall' })
        .expect(201);
    }
    expect(read.served.closed).toBe(true);
    // Its spool file (embedded; unlinked once written) is closed: its space is freed.
    expect(await waitFor(() => spoolFiles().length === 0)).toBe(true);
    await expectCut(read);
  });

  it('leaves no answer waiting for a client that stopped, one the export handed over whole included', async () => {
    // How much of an answer the kernel takes from a client that stops after its first chunk.
    const probe = await openStalled(query);
    expect(await waitFor(() => kernelTook(probe) !== null)).toBe(true);
    const capacity = kernelTook(probe)!;
    probe.socket.destroy();
    // Answers from about 130 KB under that to 100 KB over it, one small event (about 7 KB) apart: in
    // some, the export hands the response its last byte (the guard ends) while the socket still holds
    // the rest. Before, nothing watched those any more: the whole file came whenever the client read.
    const sizes = await seedSizes(capacity - 130_000);
    Object.assign(t.config, { exportsPerAccount: SWEEP, exportsPerInstance: SWEEP, exportStallTimeoutSeconds: 2 });
    const reads = await Promise.all(
      Array.from({ length: SWEEP }, (_, without) => {
        const q = ['chain:stall-sizes', ...TAIL.slice(TAIL.length - without).map((actor) => `-actor:${actor}`)];
        return openStalled(`format=json&${sizes}&q=${encodeURIComponent(q.join(' '))}`);
      }),
    );
    const handedOver = new Set<RawExport>();
    const until = Date.now() + 2 * 2000 + 1000;
    while (Date.now() < until && reads.some((r) => !r.served.closed && !r.served.writableFinished)) {
      for (const r of reads) {
        if (r.served.writableEnded && !r.served.writableFinished && !r.served.closed) handedOver.add(r);
      }
      await sleep(20);
    }
    process.stdout.write(
      `kernel took ${capacity} bytes; ${handedOver.size} of ${SWEEP} answers handed over whole, not taken\n`,
    );
    // Whether any answer ends there depends on how the kernel takes the last bytes (none, one or two of
    // 32 in practice): every answer is either cut or all in the kernel, none waits for its client.
    // (stall-guard.spec.ts shows the end-of-answer stall deterministically.)
    for (const r of reads) expect(r.served.closed || r.served.writableFinished).toBe(true);
    for (const r of handedOver) await expectCut(r);
    for (const r of reads) r.socket.destroy();
    expect(await waitFor(() => spoolFiles().length === 0)).toBe(true);
  });

  /** The client reads again: the answer stops before its end, without its last chunk. */
  async function expectCut(read: RawExport): Promise<void> {
    read.socket.on('data', (chunk: Buffer) => read.received.push(chunk));
    read.socket.resume();
    await read.closed;
    const answer = Buffer.concat(read.received);
    process.stdout.write(`stalled export: ${answer.length} of ${whole} bytes received\n`);
    expect(answer.length).toBeLessThan(whole);
    expect(answer.toString('latin1', answer.length - LAST_CHUNK.length)).not.toBe(LAST_CHUNK);
  }

  /** Sends the export's request on a raw socket, which reads nothing until told. */
  async function openExport(exportQuery = query): Promise<RawExport> {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined); // a cut is a reset
    const closed = once(socket, 'close');
    await once(socket, 'connect');
    const served = new Promise<ServerResponse>((resolve) => responses.set(socket.localPort!, resolve));
    socket.write(
      `GET /v1/events/export?${exportQuery} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
        `Authorization: ${bearer(KEYS.acme)[1]}\r\nConnection: close\r\n\r\n`,
    );
    return { socket, served: await served, received: [], closed };
  }

  /**
   * Appends, in one batch, to a chain of its own: events of about 29 KiB up to `bytes`, then the
   * TAIL events of about 7 KB, each with an actor of its own (a `q` can leave out any of them).
   * Returns the period that holds them.
   */
  async function seedSizes(bytes: number): Promise<string> {
    const event = (actor: string, randomLength: number) => ({
      actor,
      action: 'sizes',
      chain: 'stall-sizes',
      context: { blob: randomBytes(randomLength).toString('base64') },
    });
    const events = [
      ...Array.from({ length: Math.floor(bytes / (whole / EVENTS)) }, () => event('stall', CONTEXT_BYTES)),
      ...TAIL.map((actor) => event(actor, 5_000)),
    ];
    const res = await t
      .http()
      .post('/v1/events/batch')
      .set(...bearer(KEYS.acme))
      .send({ events })
      .expect(201);
    const stamps = (res.body.data as { timestamp: string }[]).map((e) => e.timestamp).sort();
    return `after=${stamps[0]}&before=${stamps[stamps.length - 1]}`;
  }

  /** Opens an export, takes its first chunk (at most 1 KiB) and stops reading. */
  async function openStalled(exportQuery: string): Promise<RawExport> {
    const read = await openExport(exportQuery);
    await once(read.socket, 'readable');
    read.received.push(read.socket.read(Math.min(read.socket.readableLength, 1024)) as Buffer);
    read.socket.pause();
    return read;
  }

  /** Bytes of the answer the kernel has taken, once the server waits for the client; null before. */
  function kernelTook(read: RawExport): number | null {
    const socket = read.served.socket;
    if (!socket || read.served.writableLength === 0) return null;
    return socket.bytesWritten - read.served.writableLength;
  }

  /** Polls `condition` every 20 ms for `ms` at most. */
  async function waitFor(condition: () => boolean, ms = 10_000): Promise<boolean> {
    for (const end = Date.now() + ms; Date.now() < end; await sleep(20)) if (condition()) return true;
    return condition();
  }

  /** The files of this process open in DATA_DIR/export-spool (embedded: one per export in flight). */
  function spoolFiles(): string[] {
    const spoolDir = join(t.config.dataDir, 'export-spool');
    return readdirSync('/proc/self/fd')
      .map((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`);
        } catch {
          return '';
        }
      })
      .filter((target) => target.startsWith(`${spoolDir}/`));
  }
});
