import { Transform, TransformCallback } from 'node:stream';

/** The error a stalled export's pipeline is destroyed with. */
export class ExportStalledError extends Error {
  constructor(seconds: number) {
    super(`The client took no byte of the export for ${seconds} s; aborted`);
    this.name = 'ExportStalledError';
  }
}

/**
 * The last stage of an export: passes bytes through unchanged, and destroys the pipeline (which
 * closes the snapshot and, through Nest's StreamableFile handler, the socket) once bytes have been
 * waiting for its consumer, the HTTP response, for `seconds` without the consumer taking any.
 * Waiting on a slow database is not a stall: only bytes ready and not taken count. Checked every
 * quarter of the timeout, so a stall is cut between 1 and 1.25 times the timeout.
 */
export class StallGuard extends Transform {
  /** When bytes started waiting for the consumer with no byte taken since; null while none wait. */
  private waitingSince: number | null = null;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly seconds: number) {
    super();
    this.timer = setInterval(() => this.check(), (seconds * 1000) / 4).unref();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    callback(null, chunk);
  }

  /** Every chunk the consumer takes (pipe's flow() reads one at a time) is progress. */
  override read(size?: number): unknown {
    const chunk: unknown = super.read(size);
    if (chunk !== null) this.waitingSince = null;
    return chunk;
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    clearInterval(this.timer);
    callback(error);
  }

  private check(): void {
    if (this.readableEnded || this.destroyed) {
      clearInterval(this.timer);
      return;
    }
    if (this.readableLength === 0 && this.writableLength === 0) {
      this.waitingSince = null;
      return;
    }
    const now = Date.now();
    this.waitingSince ??= now;
    if (now - this.waitingSince >= this.seconds * 1000) this.destroy(new ExportStalledError(this.seconds));
  }
}
