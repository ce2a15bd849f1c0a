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
 * Where a destination sends, whole (issue 40 item 4): its scheme, host, port and path, without any
 * user or password before the host nor its query (either may hold a credential); the URL itself when
 * it does not parse.
 */
export function targetOf(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.host) return url;
    const path = parsed.pathname === '/' ? '' : parsed.pathname;
    return `${parsed.protocol}//${parsed.host}${path}${parsed.search ? '?…' : ''}`;
  } catch {
    return url;
  }
}

/** The last failure: its status (or that the receiver never answered) and its message. */
/**
 * A receiver's text inside our sentence, between U+2068 FIRST STRONG ISOLATE and U+2069 POP
 * DIRECTIONAL ISOLATE (what `<bdi>` does for markup): a U+202E in it cannot reverse the rest of the
 * sentence, and right-to-left text in it keeps its own order.
 */
export const isolated = (text: string): string => `\u2068${text}\u2069`;

export function errorText(error: NonNullable<Destination['lastError']>): string {
  const status = error.status === null ? 'no answer' : `HTTP ${error.status}`;
  return `${status}: ${isolated(error.message)}`;
}

/**
 * A destination's health in words (issue 40 item 4), beside its state: failing now (how many attempts in
 * a row, the last error and its age), or not, with the last error's age and whether deliveries went
 * through since.
 * `age` says how long ago an instant was ("3 h ago").
 */
export function healthText(
  d: Pick<Destination, 'lastError' | 'consecutiveFailures' | 'lastDeliveredAt'>,
  age: (iso: string) => string,
): string {
  const error = d.lastError;
  if (d.consecutiveFailures > 0) {
    const attempts = d.consecutiveFailures === 1 ? '1 attempt' : `${d.consecutiveFailures} attempts`;
    return `Failing: ${attempts} in a row` + (error ? `, the last ${age(error.at)}: ${errorText(error)}` : '.');
  }
  if (!error) return d.lastDeliveredAt === null ? 'No delivery yet, none failed.' : 'No delivery ever failed.';
  const since =
    d.lastDeliveredAt !== null && Date.parse(d.lastDeliveredAt) > Date.parse(error.at)
      ? `since then delivered (the last ${age(d.lastDeliveredAt)}), 0 failing`
      : 'nothing delivered since, 0 failing';
  return `The last error was ${age(error.at)} (${errorText(error)}); ${since}.`;
}
