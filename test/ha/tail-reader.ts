import { setTimeout as sleep } from 'node:timers/promises';
import { serverSentEvents } from '../../libs/client/src/sse';

/** An event as the live tail sends it (the fields the drill checks). */
export interface TailedEvent {
  id: string;
  chain: { id: string; position: number };
}

/**
 * A reader of the live tail (GET /v1/events/stream) as a client writes one: when the stream ends or
 * breaks, it connects again with Last-Event-ID (the id of the last event it got) after 250 ms, for
 * as long as it runs. Records every event in arrival order and how often it reconnected.
 */
export class TailReader {
  readonly events: TailedEvent[] = [];
  reconnections = 0;
  /** Answers other than 200 to a (re)connection, by status (0: no answer). */
  readonly refusals: Record<string, number> = {};
  private lastId: string | null = null;
  private controller = new AbortController();
  private loop: Promise<void> | null = null;

  constructor(
    private readonly url: string,
    private readonly apiKey: string,
    private readonly query: string,
  ) {}

  /** Connects and resolves once the first connection is answered (events appended from then on are sent). */
  async start(): Promise<void> {
    let connected!: () => void;
    const ready = new Promise<void>((done) => (connected = done));
    this.loop = this.run(connected);
    await ready;
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await this.loop;
  }

  private async run(connected: () => void): Promise<void> {
    let first = true;
    while (!this.controller.signal.aborted) {
      try {
        const res = await fetch(`${this.url}/v1/events/stream?${this.query}`, {
          headers: {
            Authorization: `Bearer ${this.apiKey}`,
            Accept: 'text/event-stream',
            ...(this.lastId === null ? {} : { 'Last-Event-ID': this.lastId }),
          },
          signal: this.controller.signal,
        });
        if (res.status !== 200 || !res.body) {
          this.refusals[res.status] = (this.refusals[res.status] ?? 0) + 1;
          await res.body?.cancel();
        } else {
          if (first) connected();
          first = false;
          for await (const message of serverSentEvents(chunksOf(res.body))) {
            if (message.event !== 'event') continue;
            const event = JSON.parse(message.data) as TailedEvent;
            this.events.push({ id: event.id, chain: { id: event.chain.id, position: event.chain.position } });
            this.lastId = message.id;
          }
        }
      } catch {
        if (this.controller.signal.aborted) return;
        this.refusals['0'] = (this.refusals['0'] ?? 0) + 1;
      }
      if (this.controller.signal.aborted) return;
      this.reconnections++;
      await sleep(250);
    }
  }
}

/** The body's chunks as they are read, without read-ahead (as libs/client's tail reads them). */
async function* chunksOf(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
