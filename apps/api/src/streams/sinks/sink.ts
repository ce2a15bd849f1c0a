import type { EventView } from '../../events/dto/event.view';

/** What a destination is (docs/contract.md §16 "Kinds"); it never changes after creation. */
export type DestinationKind = 'webhook' | 'splunk_hec' | 'datadog' | 'otlp' | 'syslog' | 'nats';

/** How each event is shaped on the wire (docs/contract.md §16 "Formats"); `cef` is for syslog only. */
export type DestinationFormat = 'native' | 'ocsf' | 'cef';

/** Everything a sink needs to reach one destination: decrypted credentials included, so never log it. */
export interface SinkTarget {
  kind: DestinationKind;
  url: string;
  format: DestinationFormat;
  /** Per request / per publish, connect included (1–30). */
  timeoutSeconds: number;
  /** Custom headers, sent with every HTTP request (their values are credentials). */
  headers: Record<string, string>;
  secrets: {
    /** `whsec_…`; every one signs (two during a rotation). */
    webhookSecrets?: string[];
    /** splunk_hec. */
    token?: string;
    /** datadog. */
    apiKey?: string;
  };
  /** splunk_hec. */
  options: { sourcetype?: string; index?: string };
  /** STREAM_ALLOW_PRIVATE_NETWORKS: loopback, private… addresses (and `http://`) allowed. */
  allowPrivateNetworks: boolean;
  /** This instance's host name (splunk `host`, datadog `hostname`, syslog HOSTNAME). */
  hostname: string;
  /**
   * PEM CA certificates trusted instead of Node's CA store. For tests only (a receiver with a
   * self-signed certificate): the service never sets it, so production verifies against Node's store.
   */
  ca?: string;
}

/** One batch of events, in commit order. */
export interface SinkBatch {
  /** The `webhook-id`: the same on every retry of this batch. */
  id: string;
  events: EventView[];
}

/** What to do after an attempt that failed (docs/contract.md §16 "Failures"). */
export type FailureAction = 'retry' | 'disable' | 'pause';

/** A failed attempt: how the receiver (or the network) answered, and what the engine does next. */
export interface DeliveryFailure {
  ok: false;
  /** The HTTP status; null for a timeout, a network error or a refused address. */
  status: number | null;
  /** For lastError: short, never a secret, never the body of a request. */
  message: string;
  action: FailureAction;
  /** From Retry-After (seconds or HTTP date), capped at 5 min. */
  retryAfterMs: number | null;
}

/** The outcome of one attempt to deliver a batch. */
export type Delivery = { ok: true } | DeliveryFailure;

/** One destination's connection: the delivery engine calls deliver() for each batch, in order. */
export interface Sink {
  /** Never throws for a receiver's or network's failure: it answers `ok: false`. `signal` aborts. */
  deliver(batch: SinkBatch, signal: AbortSignal): Promise<Delivery>;
  /** Closes kept-open connections (syslog, nats, HTTP keep-alive). */
  close(): Promise<void>;
}
