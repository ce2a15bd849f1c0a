import type { Destination, DestinationFormat, DestinationKind, DestinationState } from '../types';

/*
 * How the Streams page says a destination's state in words (docs/contract.md §16). Plain strings only:
 * whatever a destination or its receiver said is shown as text, never as HTML.
 */

/** The kinds, in the order the create form offers them, with the words a person knows them by. */
export const KINDS: { kind: DestinationKind; label: string }[] = [
  { kind: 'webhook', label: 'Webhook (Standard Webhooks)' },
  { kind: 'splunk_hec', label: 'Splunk HTTP Event Collector' },
  { kind: 'datadog', label: 'Datadog logs' },
  { kind: 'otlp', label: 'OpenTelemetry logs (OTLP/HTTP)' },
  { kind: 'syslog', label: 'Syslog (RFC 5424)' },
  { kind: 'nats', label: 'NATS JetStream' },
];

/** A URL of the kind's shape, shown as the URL field's example. */
export const URL_EXAMPLES: Record<DestinationKind, string> = {
  webhook: 'https://hooks.example.com/audit',
  splunk_hec: 'https://splunk.example.com:8088',
  datadog: 'https://http-intake.logs.datadoghq.eu',
  otlp: 'https://otel.example.com:4318',
  syslog: 'syslog+tls://siem.example.com:6514',
  nats: 'nats://nats.example.com:4222/audit.events',
};

/**
 * The formats a kind takes: CEF is a syslog format (docs/contract.md §16). The service refuses the
 * others; offering only these keeps a person from a choice that cannot work.
 */
export function formatsFor(kind: DestinationKind): DestinationFormat[] {
  return kind === 'syslog' ? ['native', 'ocsf', 'cef'] : ['native', 'ocsf'];
}

/** Each state in words, and a mark that differs in shape, so colour is never the only cue. */
export const STATES: Record<DestinationState, { mark: string; words: string }> = {
  active: { mark: '●', words: 'active' },
  retrying: { mark: '↻', words: 'retrying (the last attempt failed)' },
  paused: { mark: '‖', words: 'paused' },
  disabled: { mark: '✕', words: 'disabled (the receiver answered 410 Gone)' },
};

/** Lag as a person reads it: "caught up", "12 s", "4 min", "3 h", "2 d"; null is before any delivery. */
export function lagText(seconds: number | null): string {
  if (seconds === null) return 'nothing delivered yet';
  if (seconds < 1) return 'caught up';
  if (seconds < 60) return `${Math.floor(seconds)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h`;
  return `${Math.floor(seconds / 86_400)} d`;
}

/**
 * Where a destination sends, without its path or anything before the host: the host (and port),
 * or the URL itself when it does not parse.
 */
export function hostOf(url: string): string {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}

/** The last failure: when, the receiver's status (or that it never answered), and its message. */
export function lastErrorText(error: Destination['lastError']): string {
  if (!error) return 'none';
  const status = error.status === null ? 'no answer' : `HTTP ${error.status}`;
  return `${status}: ${error.message} (${error.at})`;
}
