import { Injectable } from '@nestjs/common';
import { parseSearchQuery } from '@app/common';
import { Db, DestinationsRepository, EventTailRepository } from '@app/database';
import { DeliveryAudit } from './delivery-audit';

/** What a prune batch is about to take from each destination, found before it deletes. */
export interface PendingGaps {
  accountId: string;
  chainId: string;
  undelivered: { destinationId: string; positions: number[] }[];
}

/**
 * Streams and retention (docs/contract.md §16): a prune that deletes events a destination has not delivered
 * yet does not pass unseen. Before each prune batch, in its transaction (the chain locked), the
 * events it may delete that each destination of the account has not read are found; after it, the
 * ones it did delete are appended to `_audit` as `destination.gap`, in the same transaction. The
 * destination itself simply reads on: its next events are the first retained ones.
 */
@Injectable()
export class StreamGaps {
  constructor(
    private readonly destinations: DestinationsRepository,
    private readonly events: EventTailRepository,
    private readonly audit: DeliveryAudit,
  ) {}

  /** The events of `chainId` up to `upTo` (at most `limit`) each destination has not delivered. */
  async beforePrune(accountId: string, chainId: string, upTo: number, limit: number, tx: Db): Promise<PendingGaps> {
    const undelivered: PendingGaps['undelivered'] = [];
    for (const destination of await this.destinations.everyInAccount(accountId, tx)) {
      const search = destination.q === null ? undefined : parseSearchQuery(destination.q).terms;
      const positions = await this.events.unreadPositions(
        accountId,
        { search },
        destination.position,
        chainId,
        upTo,
        limit,
        tx,
      );
      if (positions.length > 0) undelivered.push({ destinationId: destination.id, positions });
    }
    return { accountId, chainId, undelivered };
  }

  /** Records the gaps the prune of positions `from`–`to` made. */
  async afterPrune(pending: PendingGaps, pruned: { from: number; to: number; deleted: number }, tx: Db): Promise<void> {
    if (pruned.deleted === 0) return;
    for (const { destinationId, positions } of pending.undelivered) {
      const gone = positions.filter((p) => p >= pruned.from && p <= pruned.to);
      if (gone.length > 0) await this.audit.gap(pending.accountId, destinationId, pending.chainId, gone, tx);
    }
  }
}
