import { bounded, networkFailure } from '../delivery-failure';
import { classifyAnswer } from '../outbound/classify-answer';
import { httpPost, sinkAgents, type SinkAgents } from '../outbound/http-post';
import type { Delivery, Sink, SinkBatch, SinkTarget } from '../sink';

/** One HTTP request of a batch, built by a kind. */
export interface HttpRequestSpec {
  url: URL;
  headers: Record<string, string>;
  body: Buffer;
}

/** What an HTTP kind adds: how a batch becomes requests (one, or several when the receiver caps their size). */
export type BuildRequests = (batch: SinkBatch) => Promise<HttpRequestSpec[]>;

/** `{url}` with `suffix` appended to its path (a trailing slash of the path is not doubled); the query stays. */
export function withPath(base: string, suffix: string): URL {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${suffix}`;
  return url;
}

/** Headers that frame the message or the connection: only the transport sets them, never a destination. */
const TRANSPORT_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'content-encoding',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'upgrade',
  'expect',
]);

/** The headers of every request: the destination's custom ones first, so a kind's own always win. */
export function baseHeaders(target: SinkTarget, contentType: string): Record<string, string> {
  const custom = Object.entries(target.headers).filter(([name]) => !TRANSPORT_HEADERS.has(name.toLowerCase()));
  return { ...Object.fromEntries(custom), 'content-type': contentType, 'user-agent': 'audit-trail' };
}

/**
 * The transport of the HTTP kinds: each request bounded by timeoutSeconds, sent in order; the batch is
 * acknowledged only when every request is, and the first failure is its outcome.
 */
export class HttpSink implements Sink {
  private readonly agents: SinkAgents;

  constructor(
    private readonly target: SinkTarget,
    private readonly build: BuildRequests,
  ) {
    this.agents = sinkAgents(target.allowPrivateNetworks, target.ca);
  }

  async deliver(batch: SinkBatch, signal: AbortSignal): Promise<Delivery> {
    try {
      for (const request of await this.build(batch)) {
        const answer = await bounded(this.target, signal, (bound) =>
          httpPost(this.agents, this.target.allowPrivateNetworks, request.url, request.headers, request.body, bound),
        );
        const delivery = classifyAnswer(this.target, answer);
        if (!delivery.ok) return delivery;
      }
      return { ok: true };
    } catch (error) {
      return networkFailure(this.target, error);
    }
  }

  close(): Promise<void> {
    this.agents.http.destroy();
    this.agents.https.destroy();
    return Promise.resolve();
  }
}
