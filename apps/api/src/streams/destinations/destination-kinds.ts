import { kindsTaking, SINK_KINDS } from '../sinks/kinds';
import type { KindField } from '../sinks/sink-kind';
import type { DestinationFormat, DestinationKind } from '../sinks';

export type { DestinationFormat, DestinationKind, KindField };

const FORMATS: Record<DestinationFormat, true> = { native: true, ocsf: true, cef: true };

/** The kinds of destination (docs/contract.md §16), for validation and the OpenAPI enum: each kind's module, sinks/kinds.ts. */
export const DESTINATION_KINDS = Object.keys(SINK_KINDS) as DestinationKind[];
/** Every format any kind takes (which kind takes which: its module's `formats`). */
export const DESTINATION_FORMATS = Object.keys(FORMATS) as DestinationFormat[];

/** The fields only some kinds take, and which kinds (from the kinds' modules): anything else sent with another kind is a 400. */
export const KIND_FIELDS: Record<KindField, readonly DestinationKind[]> = {
  token: kindsTaking('token'),
  apiKey: kindsTaking('apiKey'),
  sourcetype: kindsTaking('sourcetype'),
  index: kindsTaking('index'),
};

/** The credential each kind cannot be delivered without. */
export const REQUIRED_CREDENTIAL: Partial<Record<DestinationKind, KindField>> = Object.fromEntries(
  Object.values(SINK_KINDS).flatMap((k) =>
    (Object.entries(k.fields) as [KindField, string][])
      .filter(([, need]) => need === 'required')
      .map(([field]) => [k.kind, field]),
  ),
);

export const DEFAULT_BATCH_SIZE = 100;
export const MAX_BATCH_SIZE = 1000;
export const DEFAULT_TIMEOUT_SECONDS = 10;
export const MAX_TIMEOUT_SECONDS = 30;
export const MAX_DESTINATION_NAME_LENGTH = 100;
/** A Splunk token, a Datadog key: longer than any real one. */
export const MAX_CREDENTIAL_LENGTH = 1000;
/** A Splunk sourcetype or index. */
export const MAX_OPTION_LENGTH = 100;
