import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventView } from '../../events/dto/event.view';
import type { DestinationKind, SinkTarget } from './sink';

/** The sinks' tests' events: a chain of `count`, positions from 1, with a context a receiver can check. */
export function sampleEvents(count: number, overrides: Partial<EventView> = {}): EventView[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `evt_01KAR2Y6T0F5M3Q8W9Z1B4C${String(i).padStart(3, '0')}`,
    actor: 'alice@example.com',
    action: 'invoice.approve',
    resource: 'invoice:42',
    context: { ip: '203.0.113.7', n: i },
    chain: { id: 'chn_01KAR2Y6T0F5M3Q8W9Z1B4C7D2', name: 'default', position: i + 1 },
    hash: 'a'.repeat(64),
    previousHash: '0'.repeat(64),
    timestamp: new Date(Date.UTC(2026, 10, 22, 7, 24, 53, 449) + i).toISOString(),
    createdAt: '2026-11-22T07:24:53.449Z',
    ...overrides,
  }));
}

/** A target for a local receiver (private networks allowed, as STREAM_ALLOW_PRIVATE_NETWORKS in tests). */
export function sampleTarget(kind: DestinationKind, url: string, overrides: Partial<SinkTarget> = {}): SinkTarget {
  return {
    kind,
    url,
    format: 'native',
    timeoutSeconds: 5,
    headers: {},
    secrets: {},
    options: {},
    allowPrivateNetworks: true,
    hostname: 'audit-1.example.com',
    ...overrides,
  };
}

/** A request as a local receiver saw it. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A local HTTP (or, given a certificate, HTTPS) receiver: records every request, answers with `respond` (204 by default). */
export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  respond: (request: ReceivedRequest, response: ServerResponse) => void = (_, response) => {
    response.writeHead(204).end();
  };
  private readonly server: Server;

  constructor(private readonly tls?: { key: string; cert: string }) {
    const handle = (request: IncomingMessage, response: ServerResponse) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const received = {
          method: request.method ?? '',
          path: request.url ?? '',
          headers: request.headers,
          body: Buffer.concat(chunks),
        };
        this.requests.push(received);
        this.respond(received, response);
      });
    };
    this.server = tls ? createHttpsServer(tls, handle) : createServer(handle);
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `${this.tls ? 'https' : 'http'}://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A self-signed certificate for `localhost` and 127.0.0.1, made by openssl: a receiver Node does not trust by default. */
export function selfSignedCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'sinks-cert-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
      '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ], { stdio: 'ignore' }); // prettier-ignore
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
