/** The kinds of destination (contract §16), as the `destinations` table's check lists them. */
export const DESTINATION_KINDS = ['webhook', 'splunk_hec', 'datadog', 'otlp', 'syslog', 'nats'] as const;
export type DestinationKind = (typeof DESTINATION_KINDS)[number];

/** Every format any kind takes (which kind takes which: formatsOf in ../sinks). */
export const DESTINATION_FORMATS = ['native', 'ocsf', 'cef'] as const;

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
export const MAX_DESTINATION_URL_LENGTH = 2048;
/** A Splunk token, a Datadog key: longer than any real one. */
export const MAX_CREDENTIAL_LENGTH = 1000;
/** A Splunk sourcetype or index. */
export const MAX_OPTION_LENGTH = 100;
