import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver took, and what it made of it. */
export interface ReceivedBatch {
  webhookId: string;
  status: number;
  verified: boolean;
  eventIds: string[];
  events: { id: string; chain: { id: string; position: number }; timestamp: string }[];
}

/** What the receiver answers the next requests with (then 200): a status, headers, or `hang` (no answer). */
export type Answer = { status: number; headers?: Record<string, string> } | 'hang';

/**
 * A Standard Webhooks receiver on 127.0.0.1 for the streams suites: it verifies each request's
 * signature with the `standardwebhooks` package (what a customer's receiver would run), records the
 * batch, and answers as told. `stop()`/`start()` take it off the network and back on the same port
 * (connections refused meanwhile).
 */
export class WebhookReceiver {
  readonly batches: ReceivedBatch[] = [];
  readonly answers: Answer[] = [];
  secrets: string[] = [];
  /** Every answer waits this long (a slow receiver). */
  delayMs = 0;
  private server: Server | null = null;
  private port = 0;
  private readonly hanging = new Set<ServerResponse>();

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => void this.take(req, res));
    await new Promise<void>((done) => server.listen(this.port, '127.0.0.1', done));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  }

  /** Every acknowledged event id, in the order received (duplicates included). */
  get acknowledged(): string[] {
    return this.batches.filter((b) => b.status === 200).flatMap((b) => b.eventIds);
  }

  /** Acknowledged events, each once, in first-received order, and how many arrived more than once. */
  deduplicated(): { ids: string[]; duplicates: number } {
    const seen = new Set<string>();
    let duplicates = 0;
    for (const id of this.acknowledged) {
      if (seen.has(id)) duplicates++;
      else seen.add(id);
    }
    return { ids: [...seen], duplicates };
  }

  private async take(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = {
      'webhook-id': String(req.headers['webhook-id'] ?? ''),
      'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
      'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
    };
    const verified = this.secrets.some((secret) => {
      try {
        new Webhook(secret).verify(body, headers);
        return true;
      } catch {
        return false;
      }
    });
    const answer = this.answers.shift() ?? { status: 200 };
    let events: ReceivedBatch['events'] = [];
    try {
      events = (JSON.parse(body) as { data: { events: ReceivedBatch['events'] } }).data.events;
    } catch {
      events = [];
    }
    const status = answer === 'hang' ? 0 : answer.status;
    this.batches.push({
      webhookId: headers['webhook-id'],
      status,
      verified,
      eventIds: events.map((e) => e.id),
      events,
    });
    if (this.delayMs > 0) await new Promise((done) => setTimeout(done, this.delayMs));
    if (answer === 'hang') {
      this.hanging.add(res);
      res.on('close', () => this.hanging.delete(res));
      return;
    }
    res.writeHead(answer.status, answer.headers ?? {});
    res.end();
  }
}

/** Polls `check` until it holds (or `ms` pass: the last failure is thrown). */
export async function eventually(check: () => void | Promise<void>, ms = 20_000, every = 100): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((done) => setTimeout(done, every));
    }
  }
}
