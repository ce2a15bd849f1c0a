import { Readable } from 'node:stream';
import { EventRecord, EventSnapshot } from '@app/database';

const BATCH = 500;

/**
 * The snapshot's cursor as an object stream. It fetches a batch only when its consumer wants
 * more (backpressure), and ends the transaction and returns the connection as soon as the last
 * row is read or the stream is destroyed (e.g. the client went away).
 */
export class SnapshotRows<Out> extends Readable {
  private fetching = false;
  private exhausted = false;

  constructor(
    private readonly snapshot: EventSnapshot,
    private readonly toRecord: (event: EventRecord) => Out,
  ) {
    super({ objectMode: true, highWaterMark: BATCH });
  }

  override _read(): void {
    if (this.fetching || this.exhausted) return;
    this.fetching = true;
    void this.snapshot.fetch(BATCH).then(
      (rows) => this.deliver(rows),
      (error: unknown) => this.destroy(error as Error),
    );
  }

  private deliver(rows: EventRecord[]): void {
    this.fetching = false;
    if (this.destroyed) return;
    try {
      for (const row of rows) this.push(this.toRecord(row));
    } catch (error) {
      this.destroy(error as Error);
      return;
    }
    if (rows.length < BATCH) {
      this.exhausted = true;
      void this.snapshot.close().then(
        () => this.push(null),
        (error: unknown) => this.destroy(error as Error),
      );
    }
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.snapshot.close().then(
      () => callback(error),
      (closeError: unknown) => callback(error ?? (closeError as Error)),
    );
  }
}
