import type { DestinationFormat, DestinationKind } from '../sinks';

export type { DestinationFormat, DestinationKind };

/** Each kind once: the compiler refuses this object when the sinks' DestinationKind gains or loses one. */
const KINDS: Record<DestinationKind, true> = {
  webhook: true,
  splunk_hec: true,
  datadog: true,
  otlp: true,
  syslog: true,
  nats: true,
};
const FORMATS: Record<DestinationFormat, true> = { native: true, ocsf: true, cef: true };

/** The kinds of destination (docs/contract.md §16), for validation and the OpenAPI enum. */
export const DESTINATION_KINDS = Object.keys(KINDS) as DestinationKind[];
/** Every format any kind takes (which kind takes which: formatsOf in ../sinks). */
export const DESTINATION_FORMATS = Object.keys(FORMATS) as DestinationFormat[];

/** The fields only some kinds take: anything else sent with another kind is a 400. */
export const KIND_FIELDS = {
  token: ['splunk_hec'],
  apiKey: ['datadog'],
  sourcetype: ['splunk_hec'],
  index: ['splunk_hec'],
} as const satisfies Record<string, readonly DestinationKind[]>;
export type KindField = keyof typeof KIND_FIELDS;

/** The credential each kind cannot be delivered without. */
export const REQUIRED_CREDENTIAL: Partial<Record<DestinationKind, KindField>> = {
  splunk_hec: 'token',
  datadog: 'apiKey',
};

export const DEFAULT_BATCH_SIZE = 100;
export const MAX_BATCH_SIZE = 1000;
export const DEFAULT_TIMEOUT_SECONDS = 10;
export const MAX_TIMEOUT_SECONDS = 30;
export const MAX_DESTINATION_NAME_LENGTH = 100;
/** A Splunk token, a Datadog key: longer than any real one. */
export const MAX_CREDENTIAL_LENGTH = 1000;
/** A Splunk sourcetype or index. */
export const MAX_OPTION_LENGTH = 100;
