import type { components } from './api-schema';
import type { QueryOf } from './http';

/*
 * The names users write, from the generated schema (api-schema.ts). Nothing here is hand-written
 * wire shape: when the service's description changes, these change with it.
 */
type Schemas = components['schemas'];

export type AuditEvent = Schemas['EventView'];
export type NewEvent = Schemas['CreateEventDto'];
export type VerificationResult = Schemas['VerificationResultView'];
export type Chain = Schemas['ChainView'];
export type ChainVerification = Schemas['ChainVerificationView'];
export type InclusionProof = Schemas['InclusionProofView'];
export type ConsistencyProof = Schemas['ConsistencyProofView'];
export type WitnessedCheckpoint = Schemas['WitnessedCheckpointView'];
export type Witness = Schemas['WitnessView'];
export type Stats = Schemas['StatsView'];
export type Me = Schemas['MeView'];
export type Account = Schemas['AccountView'];
export type NewAccount = Schemas['CreateAccountDto'];
export type Key = Schemas['KeyView'];
export type NewKey = Schemas['NewKeyView'];
export type KeyRequest = Schemas['CreateKeyDto'];
export type KeyRotation = Schemas['RotateKeyDto'];
export type Destination = Schemas['DestinationView'];
export type NewDestination = Schemas['NewDestinationView'];
export type DestinationRequest = Schemas['CreateDestinationDto'];
export type DestinationChange = Schemas['ChangeDestinationDto'];
export type DestinationReplay = Schemas['ReplayDestinationDto'];
export type ErasureRequest = Schemas['EraseDto'];
export type ErasureResult = Schemas['ErasureResultView'] | Schemas['ErasureDryRunView'];
export type Erasure = Schemas['ErasureView'];
export type Retention = Schemas['RetentionDto'];
export type LegalHold = Schemas['LegalHoldDto'];
export type SweepResult = Schemas['SweepResultView'];
export type ActionSchema = Schemas['SchemaView'];
export type ActionSchemaWithVersions = Schemas['SchemaWithVersionsView'];
export type ActionSchemaRequest = Schemas['PutSchemaDto'];
export type SchemaPreview = Schemas['SchemaPreviewView'];
export type ExportDocument = Schemas['ExportDocumentView'];

/** GET /v1/events's filters, without the cursor (list() follows it). */
export type EventFilters = Omit<QueryOf<'/v1/events', 'get'>, 'cursor'>;
export type ChainFilters = Omit<QueryOf<'/v1/chains', 'get'>, 'cursor'>;
export type ExportQuery = QueryOf<'/v1/events/export', 'get'>;
export type StatsQuery = QueryOf<'/v1/stats/events', 'get'>;
export type TailFilters = Omit<QueryOf<'/v1/events/stream', 'get'>, 'last_event_id'>;

/** What an acknowledged event proves (docs/contract.md §20): enough to ask for its proofs later. */
export interface Receipt {
  id: string;
  chainId: string;
  position: number;
  hash: string;
}

export function receiptOf(event: AuditEvent): Receipt {
  return { id: event.id, chainId: event.chain.id, position: event.chain.position, hash: event.hash };
}
