/**
 * @audit-trail/client: the audit trail service's client (docs/contract.md §20).
 * Call (AuditTrailClient), record (client.recorder()), verify (client.verifyReceipt()).
 */
export { AuditTrailClient } from './client';
export type { AuditTrailClientOptions } from './client';
export { AuditTrailError, AuditTrailVerificationError } from './errors';
export type { ErrorCode, FieldError, VerificationFailure } from './errors';
export { Recorder } from './recorder/recorder';
export type { RecorderCounters, RecorderMetric, RecorderOptions, RejectedEvent } from './recorder/recorder';
export { SpoolFullError, SpoolLockedError } from './recorder/spool';
export type { FsyncMode } from './recorder/spool';
export type { CheckReceiptsOptions, ReceiptCheckCounters } from './recorder/receipt-checker';
export { backoffCeiling, fullJitterDelay, retryDelay } from './recorder/backoff';
export type { BackoffPolicy } from './recorder/backoff';
export type { TailedEvent, TailOptions } from './resources/events';
export type { ReceiptCheck, VerifiedCheckpoint, VerifyReceiptOptions } from './verify/verify-receipt';
export type { ReceiptVerdict, VerifyReceiptsOptions } from './verify/verify-receipts';
export { receiptOf } from './types';
export type { ActionSchemas, ActionSchemaTypes, RecordedEvent, SchemaOf } from './schema-types/recorded-event';
export type * from './types';
export type { components, operations, paths } from './api-schema';
