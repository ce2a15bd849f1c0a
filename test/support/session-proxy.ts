import { AddressInfo, createServer, Server, Socket, connect } from 'node:net';

/** The protocol version of a StartupMessage (3.0); SSLRequest and the others carry other codes. */
const PROTOCOL_3 = 196608;

/**
 * A TCP proxy to a PostgreSQL server that can make the sessions opened through it read-only: it
 * adds `-c default_transaction_read_only=on` to each StartupMessage's `options` while `readOnly`,
 * so `SHOW transaction_read_only` answers `on` there, as on a standby (a hot standby's sessions
 * are read-only the same way). Another "host" of one server, for DATABASE_URL's host choice
 * (docs/contract.md §21). Only for clients without TLS (the e2e tests').
 */
export class SessionProxy {
  readOnly = false;
  /** Sessions opened through the proxy, and those of them still open. */
  opened = 0;
  private readonly sockets = new Set<Socket>();
  private server: Server | null = null;
  port = 0;

  constructor(
    private readonly target: { host: string; port: number },
    readOnly = false,
  ) {
    this.readOnly = readOnly;
  }

  get open(): number {
    return this.sockets.size / 2;
  }

  async start(): Promise<this> {
    this.server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    this.sockets.forEach((s) => s.destroy());
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private accept(client: Socket): void {
    this.opened++;
    const readOnly = this.readOnly;
    const server = connect(this.target.port, this.target.host);
    for (const s of [client, server]) {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
    let pending = Buffer.alloc(0);
    const first = (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      if (pending.length < 4 || pending.length < pending.readInt32BE(0)) return;
      client.off('data', first);
      const length = pending.readInt32BE(0);
      const message = pending.subarray(0, length);
      server.write(readOnly ? withReadOnlyOption(message) : message);
      server.write(pending.subarray(length));
      client.pipe(server);
    };
    client.on('data', first);
    server.pipe(client);
  }
}

/** `message` (a StartupMessage) with `-c default_transaction_read_only=on` in its options. */
function withReadOnlyOption(message: Buffer): Buffer {
  if (message.readInt32BE(4) !== PROTOCOL_3) return message;
  const fields = message
    .subarray(8, message.length - 1)
    .toString('utf8')
    .split('\0');
  const params = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) params.set(fields[i]!, fields[i + 1]!);
  params.set('options', `${params.get('options') ?? ''} -c default_transaction_read_only=on`.trim());
  const body = Buffer.from([...params].map(([k, v]) => `${k}\0${v}\0`).join('') + '\0', 'utf8');
  const header = Buffer.alloc(8);
  header.writeInt32BE(8 + body.length, 0);
  header.writeInt32BE(PROTOCOL_3, 4);
  return Buffer.concat([header, body]);
}
