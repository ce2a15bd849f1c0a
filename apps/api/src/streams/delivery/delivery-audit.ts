import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/common';
import {
  AuditTrail,
  Db,
  DestinationError,
  DestinationRow,
  DestinationsRepository,
  DestinationState,
  TransactionRunner,
} from '@app/database';

/** The actor of what the delivery engine does on its own: disabling, pausing, reporting a gap. */
export const STREAMS_ACTOR = 'service:streams';

/**
 * The delivery engine's writes that `_audit` records (docs/contract.md §16), each in the transaction of
 * the change: a destination disabled by a `410`, paused by a refusal that must not be retried (OTLP)
 * or by STREAM_PAUSE_AFTER_HOURS of failures, and the events a prune took before they were delivered.
 */
@Injectable()
export class DeliveryAudit {
  constructor(
    private readonly destinations: DestinationsRepository,
    private readonly transactions: TransactionRunner,
    private readonly trail: AuditTrail,
    private readonly config: AppConfig,
  ) {}

  /**
   * Records a failed attempt and the backoff before the next (`retryInMs`); the state it leaves, or
   * null when this worker no longer delivers the destination.
   */
  async failed(
    row: DestinationRow,
    owner: string,
    version: number,
    error: DestinationError,
    outcome: { action: 'retry' | 'pause' | 'disable'; retryInMs: number },
  ): Promise<DestinationState | null> {
    const { action } = outcome;
    return this.transactions.run(async (tx) => {
      const after = await this.destinations.failed(
        row.id,
        owner,
        version,
        error,
        outcome,
        this.config.streamPauseAfterHours,
        tx,
      );
      if (after?.state === 'disabled' || after?.state === 'paused') {
        const reason =
          after.state === 'disabled'
            ? 'the receiver answered 410 Gone'
            : action === 'pause'
              ? 'the receiver refused the batch in a way that must not be retried'
              : `deliveries failed for ${this.config.streamPauseAfterHours} hour(s)`;
        await this.trail.record(
          row.accountId,
          [
            {
              actor: STREAMS_ACTOR,
              action: after.state === 'disabled' ? 'destination.disabled' : 'destination.paused',
              resource: row.id,
              context: { reason, status: error.status, failingSince: after.failingSince.toISOString() },
            },
          ],
          tx,
        );
      }
      return after?.state ?? null;
    });
  }

  /** A prune deleted `positions` of `chainId` that `destinationId` had not delivered. */
  gap(accountId: string, destinationId: string, chainId: string, positions: readonly number[], tx: Db): Promise<void> {
    return this.trail.record(
      accountId,
      [
        {
          actor: STREAMS_ACTOR,
          action: 'destination.gap',
          resource: destinationId,
          context: { chainId, skippedPositions: ranges(positions), skippedEvents: positions.length },
        },
      ],
      tx,
    );
  }
}

/** Ascending positions as inclusive ranges: [1, 2, 3, 7] → [[1, 3], [7, 7]]. */
export function ranges(positions: readonly number[]): [number, number][] {
  const out: [number, number][] = [];
  for (const p of positions) {
    const last = out[out.length - 1];
    if (last && p === last[1] + 1) last[1] = p;
    else out.push([p, p]);
  }
  return out;
}
