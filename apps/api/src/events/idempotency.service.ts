import { Injectable } from '@nestjs/common';
import { AppError, IDEMPOTENCY_KEY, IDEMPOTENCY_KEY_TEXT } from '@app/common';
import { accountKey, EventRecord, IdempotencyKeysRepository } from '@app/database';
import { canonicalJson, sha256Hex } from '@app/hashing';
import { AppendRequest } from './append/append-request';
import { answerOf, Idempotency, inProgress, Replay, reused } from './append/idempotent-ledger';

/**
 * Idempotency-Key for POST /v1/events and POST /v1/events/batch (docs/contract.md §7, §9, §21),
 * before the append queue: the key checked, the request's digest taken, a request with a key in
 * flight on this instance refused at once (409, or 422 for another body), and an answered key
 * replayed without a transaction. What decides across instances runs in the append's own
 * transaction (IdempotentLedger): the key's lock, the replay or 422, the answer stored with the
 * events. Nothing is claimed outside that transaction: a request that fails, or is cut with its
 * connection, leaves no trace.
 */
@Injectable()
export class IdempotencyService {
  /** The keys (accountKey) of this instance's requests in flight, and the digest of each request. */
  private readonly inFlight = new Map<string, string>();

  constructor(private readonly keys: IdempotencyKeysRepository) {}

  /** Of the endpoint and the request: keys are one namespace per account, a key used on another endpoint is a reuse (§9). */
  static digest(endpoint: string, request: unknown): string {
    return sha256Hex(canonicalJson({ endpoint, request }));
  }

  /**
   * Runs `append` (the request `events` to `endpoint`, with `key`) unless the key is answered (its
   * replay, or 422) or a request with it is in flight on this instance (409, or 422 if that one has
   * another body). `respond` builds the answer stored under the key from the committed events.
   */
  async once<T>(
    endpoint: string,
    events: readonly AppendRequest[],
    key: string,
    respond: (events: EventRecord[]) => string,
    append: (idempotency: Idempotency) => Promise<T>,
  ): Promise<T | Replay> {
    if (!IDEMPOTENCY_KEY.test(key)) {
      throw AppError.validation([
        { field: 'Idempotency-Key', message: `Idempotency-Key must be ${IDEMPOTENCY_KEY_TEXT}` },
      ]);
    }
    const accountId = events[0]!.accountId;
    const digest = IdempotencyService.digest(endpoint, events.map(asSent));
    return this.whileInFlight(accountKey(accountId, key), digest, async () => {
      // Read before queueing: a replay costs no transaction.
      const stored = answerOf(await this.keys.find(accountId, key), digest);
      if (stored instanceof AppError) throw stored;
      return stored ?? append({ accountId, key, digest, respond });
    });
  }

  /** Runs `work` while marking the key in flight on this instance: the mark lives as long as `work`, nothing outlives the request. */
  private async whileInFlight<T>(id: string, digest: string, work: () => Promise<T>): Promise<T> {
    const running = this.inFlight.get(id);
    if (running !== undefined) throw running === digest ? inProgress() : reused();
    this.inFlight.set(id, digest);
    try {
      return await work();
    } finally {
      this.inFlight.delete(id);
    }
  }
}

/** What the client sent of an event, as the digest covers it (fields the service adds to a request stay out). */
function asSent({ chainName, actor, action, resource, context }: AppendRequest) {
  return { chainName, actor, action, resource, context };
}
