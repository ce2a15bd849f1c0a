import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { isIP } from 'node:net';
import { bounded, networkFailure } from '../delivery-failure';
import { toJsonEvent } from '../formats/json-event';
import { bareHost, resolveAllowed } from '../outbound/resolve';
import type { Delivery, Sink, SinkBatch, SinkTarget } from '../sink';
import { natsSubjectOf } from './nats-subject';
import { JSON_FORMATS, socketUrlProblem, type SinkKind } from '../sink-kind';

/** The client's connection type (the transport does not re-export it; nats-core is not our dependency). */
type NatsConnection = Awaited<ReturnType<typeof connect>>;

/**
 * `nats`: a JetStream publish per event to the URL's subject, `Nats-Msg-Id` = the event id so the
 * stream drops a retry's duplicates. The batch is acknowledged once JetStream acked every message.
 * One connection per sink, to the checked address only: no reconnect of the client's own and no
 * server list learnt from the cluster, so every connection goes through the address policy.
 */
export class NatsSink implements Sink {
  private connection: { nc: NatsConnection; js: JetStreamClient } | null = null;
  private readonly host: string;
  private readonly port: number;
  private readonly subject: string;

  constructor(private readonly target: SinkTarget) {
    const url = new URL(target.url);
    this.host = bareHost(url.hostname);
    this.port = Number(url.port);
    this.subject = natsSubjectOf(url) ?? '';
  }

  async deliver(batch: SinkBatch, signal: AbortSignal): Promise<Delivery> {
    const timeout = this.target.timeoutSeconds * 1000;
    try {
      await bounded(this.target, signal, async (bound) => {
        const { js } = this.connection ?? (await this.open(timeout, bound));
        const payloads = batch.events.map((event) => JSON.stringify(toJsonEvent(this.target.format, event)));
        await Promise.all(
          payloads.map((data, i) => js.publish(this.subject, data, { msgID: batch.events[i]?.id, timeout })),
        );
      });
      return { ok: true };
    } catch (error) {
      await this.drop();
      return networkFailure(this.target, noResponders(error) ? new NoStreamError(this.subject) : error);
    }
  }

  async close(): Promise<void> {
    await this.drop();
  }

  private async open(timeout: number, signal: AbortSignal): Promise<{ nc: NatsConnection; js: JetStreamClient }> {
    const [first] = await resolveAllowed(this.host, this.target.allowPrivateNetworks);
    const address = first?.address ?? '';
    const nc = await connect({
      servers: `${isIP(address) === 6 ? `[${address}]` : address}:${this.port}`,
      timeout,
      reconnect: false,
      ignoreClusterUpdates: true,
      noRandomize: true,
      name: 'audit-trail',
    });
    if (signal.aborted) {
      await closeQuickly(nc); // the attempt ended while connecting: nobody would close this one
      throw signal.reason;
    }
    const connection = { nc, js: jetstream(nc, { timeout }) };
    void nc.closed().then(() => {
      if (this.connection === connection) this.connection = null;
    });
    this.connection = connection;
    return connection;
  }

  private async drop(): Promise<void> {
    const connection = this.connection;
    this.connection = null;
    if (connection) await closeQuickly(connection.nc);
  }
}

/** Closes a connection, waiting at most a second for a server that no longer answers. */
async function closeQuickly(nc: NatsConnection): Promise<void> {
  if (nc.isClosed()) return;
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, 1000)));
  await Promise.race([nc.close().catch(() => undefined), waited]);
  clearTimeout(timer);
}

/** The client reports a publish nobody answered as "jetstream is not enabled"; most often no stream takes the subject. */
function noResponders(error: unknown): boolean {
  const message = typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined;
  return typeof message === 'string' && /jetstream is not enabled|no responders/i.test(message);
}

/** lastError's message when no JetStream stream answered a publish. */
class NoStreamError extends Error {
  readonly code = 'ERR_SINK_NO_STREAM';

  constructor(subject: string) {
    super(`no JetStream stream answered on ${subject} (no stream takes this subject, or JetStream is off)`);
    this.name = 'NoStreamError';
  }
}

/** `nats`: nats://host:port/<subject> (JetStream). */
export const natsKind: SinkKind<'nats'> = {
  kind: 'nats',
  formats: JSON_FORMATS,
  fields: {},
  urlProblem: (url) => {
    const shape = 'must be nats://host:port/<subject>';
    return socketUrlProblem(url, ['nats:'], shape, (u) =>
      natsSubjectOf(u) === null ? `${shape} (a subject: dot-separated tokens, no wildcard)` : null,
    );
  },
  open: (target) => new NatsSink(target),
};
