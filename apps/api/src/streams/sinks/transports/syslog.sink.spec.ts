import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { connect, createServer as createTcpServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer, type TLSSocket } from 'node:tls';
import { openSink } from '../open-sink';
import { sampleEvents, sampleTarget, selfSignedCertificate } from '../sink.fixture';
import type { Sink } from '../sink';

const RSYSLOGD = process.env.RSYSLOGD_PATH ?? '/usr/sbin/rsyslogd';
/** `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD MSG` (RFC 5424 §6). */
const HEADER = /^<110>1 (\S+) audit-1\.example\.com audit-trail \d+ audit - (.*)$/;
const signal = () => new AbortController().signal;

describe('syslog over TCP, received by rsyslog', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sinks-rsyslog-'));
  const out = join(dir, 'received.log');
  let rsyslog: ChildProcess;
  let port: number;
  let sut: Sink;

  beforeAll(async () => {
    port = await unusedPort();
    writeFileSync(
      join(dir, 'rsyslog.conf'),
      [
        `global(workDirectory="${dir}" maxMessageSize="64k")`,
        'module(load="imtcp")',
        'template(name="raw" type="string" string="%rawmsg%\\n")',
        `input(type="imtcp" port="${port}" address="127.0.0.1")`,
        `*.* action(type="omfile" file="${out}" template="raw")`,
      ].join('\n'),
    );
    rsyslog = spawn(RSYSLOGD, ['-n', '-f', join(dir, 'rsyslog.conf'), '-i', join(dir, 'rsyslogd.pid')], {
      stdio: 'ignore',
    });
    await until(() => canConnect(port));
  });
  afterEach(() => sut.close());
  afterAll(async () => {
    const exited = new Promise((resolve) => rsyslog.once('exit', resolve));
    rsyslog.kill();
    await exited;
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends one RFC 5424 message per event, JSON, in order, octet-counted', async () => {
    sut = openSink(sampleTarget('syslog', `syslog://127.0.0.1:${port}`));
    const events = sampleEvents(5, { context: { note: 'multi\nline = "quoted"' } });
    await expect(sut.deliver({ id: 'b1', events: events.slice(0, 3) }, signal())).resolves.toEqual({ ok: true });
    await expect(sut.deliver({ id: 'b2', events: events.slice(3) }, signal())).resolves.toEqual({ ok: true });

    const lines = await linesOf(out, 5);
    expect(lines.map((line) => JSON.parse(HEADER.exec(line)![2]!) as unknown)).toEqual(events);
    expect(lines.map((line) => HEADER.exec(line)![1])).toEqual(events.map((event) => event.timestamp));
  });

  it('sends CEF with format cef', async () => {
    sut = openSink(sampleTarget('syslog', `syslog://127.0.0.1:${port}`, { format: 'cef' }));
    const events = sampleEvents(2, { action: 'doc.created', actor: 'bob=admin' });
    await expect(sut.deliver({ id: 'b3', events }, signal())).resolves.toEqual({ ok: true });

    const lines = (await linesOf(out, 7)).slice(5);
    expect(lines.map((line) => HEADER.exec(line)![2])).toEqual(
      events.map(
        (event) =>
          expect.stringMatching(
            `^CEF:0\\|audit-trail\\|audit-trail\\|1\\|doc.created\\|doc.created\\|3\\|rt=\\d+ externalId=${event.id} suser=bob\\\\=admin `,
          ) as string,
      ),
    );
  });
});

describe('syslog over TLS (RFC 5425)', () => {
  let cert: string;
  let server: TlsServer;
  let port: number;
  const received: string[] = [];
  const sockets: TLSSocket[] = [];
  let sut: Sink;

  beforeAll(async () => {
    const certificate = selfSignedCertificate();
    cert = certificate.cert;
    server = createTlsServer(certificate, (socket) => {
      sockets.push(socket);
      let buffer = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        buffer = Buffer.concat([buffer, chunk]);
        for (let frame = octetFrame(buffer); frame; frame = octetFrame(buffer)) {
          received.push(frame.message);
          buffer = buffer.subarray(frame.end);
        }
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterEach(() => sut.close());
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('delivers over a verified TLS connection, by name, and opens a new one after the collector closed it', async () => {
    sut = openSink(sampleTarget('syslog', `syslog+tls://localhost:${port}`, { ca: cert }));
    const events = sampleEvents(4);
    await expect(sut.deliver({ id: 'b1', events: events.slice(0, 2) }, signal())).resolves.toEqual({ ok: true });
    await until(() => received.length === 2);
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));

    await expect(sut.deliver({ id: 'b2', events: events.slice(2) }, signal())).resolves.toEqual({ ok: true });
    await until(() => received.length === 4);
    expect(received.map((message) => JSON.parse(HEADER.exec(message)![2]!) as unknown)).toEqual(events);
    expect(sockets).toHaveLength(2);
  });

  it('refuses a certificate Node does not trust', async () => {
    sut = openSink(sampleTarget('syslog', `syslog+tls://127.0.0.1:${port}`));
    await expect(sut.deliver({ id: 'b3', events: sampleEvents(1) }, signal())).resolves.toMatchObject({
      ok: false,
      status: null,
      action: 'retry',
      message: expect.stringMatching(/certificate/i) as string,
    });
  });
});

/** One RFC 6587 octet-counted frame at the start of `buffer`, or null while it is incomplete. */
function octetFrame(buffer: Buffer): { message: string; end: number } | null {
  const space = buffer.indexOf(0x20);
  if (space < 0) return null;
  const length = Number(buffer.subarray(0, space).toString('ascii'));
  const end = space + 1 + length;
  return buffer.length < end ? null : { message: buffer.subarray(space + 1, end).toString('utf8'), end };
}

async function linesOf(file: string, count: number): Promise<string[]> {
  const read = () => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
  await until(() => read().length >= count);
  return read();
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(true));
    socket.once('error', () => resolve(false));
    socket.once('connect', () => socket.destroy());
  });
}

async function unusedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
