import { Http } from './http';
import { Recorder, RecorderOptions } from './recorder/recorder';
import {
  AccountsResource,
  DestinationsResource,
  ErasuresResource,
  KeysResource,
  RetentionResource,
  SchemasResource,
} from './resources/admin';
import { ChainsResource, TransparencyResource } from './resources/chains';
import { EventsResource } from './resources/events';
import { HealthResource } from './resources/health';
import type { Receipt } from './types';
import { CheckpointCache } from './verify/checkpoint-cache';
import { ReceiptCheck, verifyReceipt, VerifyReceiptOptions } from './verify/verify-receipt';
import { ReceiptVerdict, verifyReceipts, VerifyReceiptsOptions } from './verify/verify-receipts';

export interface AuditTrailClientOptions {
  /** The service's address, e.g. `https://audit.internal.example`. */
  baseUrl: string;
  /** A key of the account (scope `ingest` to append, `read` for the rest, `admin`/`operator` for admin routes). */
  apiKey: string;
  /** Another fetch (a proxy's, a test's); default the global one. */
  fetch?: typeof fetch;
}

/**
 * The audit trail service over HTTP (docs/contract.md §20): typed calls for every route of
 * /openapi.json, grouped by resource; a recorder for the hot path; receipts checked against the
 * service's signed checkpoints.
 */
export class AuditTrailClient {
  readonly events: EventsResource;
  readonly chains: ChainsResource;
  readonly transparency: TransparencyResource;
  readonly accounts: AccountsResource;
  readonly keys: KeysResource;
  readonly destinations: DestinationsResource;
  readonly erasures: ErasuresResource;
  readonly retention: RetentionResource;
  readonly schemas: SchemasResource;
  readonly health: HealthResource;
  private readonly http: Http;
  /** The checkpoints verifyReceipt checked, reused for the receipts they cover (checkpointMaxAgeMs). */
  private readonly checkpoints = new CheckpointCache();

  constructor(options: AuditTrailClientOptions) {
    this.http = new Http({ ...options, userAgent: 'audit-trail-client' });
    this.events = new EventsResource(this.http);
    this.chains = new ChainsResource(this.http);
    this.transparency = new TransparencyResource(this.http);
    this.accounts = new AccountsResource(this.http);
    this.keys = new KeysResource(this.http);
    this.destinations = new DestinationsResource(this.http);
    this.erasures = new ErasuresResource(this.http);
    this.retention = new RetentionResource(this.http);
    this.schemas = new SchemasResource(this.http);
    this.health = new HealthResource(this.http);
  }

  /** A batching, retrying recorder; durable with a spoolDir. */
  recorder(options: RecorderOptions = {}): Recorder {
    return new Recorder(this.http, options, (receipts, verify) => this.verifyReceipts(receipts, verify));
  }

  /**
   * Checks an acknowledged event against the service's signed checkpoint with the pinned `key`;
   * rejects with AuditTrailVerificationError naming what failed.
   */
  verifyReceipt(receipt: Receipt, options: VerifyReceiptOptions): Promise<ReceiptCheck> {
    return verifyReceipt(this, receipt, options, this.checkpoints);
  }

  /**
   * Many receipts at once: per chain one checkpoint check, then the chain's events read in pages
   * and its root rebuilt when the receipts are dense in it, else each receipt alone. Resolves with
   * a verdict per receipt, in their order.
   */
  verifyReceipts(receipts: readonly Receipt[], options: VerifyReceiptsOptions): Promise<ReceiptVerdict[]> {
    return verifyReceipts(this, receipts, options, this.checkpoints);
  }
}
