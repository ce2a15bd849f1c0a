import type { Socket } from 'node:net';
import { Transform, TransformCallback } from 'node:stream';

/** The error a stalled export's pipeline is destroyed with. */
export class ExportStalledError extends Error {
  constructor(seconds: number) {
    super(`The client took no byte of the export for ${seconds} s; aborted`);
    this.name = 'ExportStalledError';
  }
}

/** What the guard is piped into: the HTTP response (an OutgoingMessage, not a stream.Writable). */
interface Consumer {
  /** Bytes written and not yet handed to the OS: for a response, its own and its socket's. */
  readonly writableLength: number;
  readonly writableFinished: boolean;
  readonly destroyed: boolean;
  readonly socket?: Socket | null;
  destroy(): void;
}

/**
 * The last stage of an export: passes bytes through unchanged, and cuts the export once bytes
 * have waited for `seconds` without the client taking any. Bytes wait in the guard, or in the
 * HTTP response it is piped into (the response's and its socket's buffers) when the kernel takes
 * no more: the client stopped reading. The response is watched until it has handed its last byte
 * to the OS, so a client that stops once the export has handed over its last bytes (the whole
 * file, as much as the kernel's buffers hold, and the rest waiting in the socket) is cut too: the
 * guard has ended by then, and the response would otherwise wait for that client forever and
 * deliver the file whole whenever it reads again. Same on both databases, whatever the source.
 *
 * The cut destroys the pipeline (which closes the snapshot, or the spool file) and resets the
 * connection: the bytes the kernel still holds for the client are dropped with it, and the client
 * sees the file end before its end. Waiting on a slow database is not a stall: only bytes ready
 * and not taken count. Checked every quarter of the timeout, so a stall is cut between 1 and 1.25
 * times the timeout after the last byte taken.
 */
export class StallGuard extends Transform {
  private consumer: Consumer | null = null;
  /** When bytes started waiting with no byte taken since; null while none wait. */
  private waitingSince: number | null = null;
  /** The consumer's `writableLength` at the last check: less now means the OS took bytes. */
  private consumerPending = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly seconds: number,
    /** Told once, when the export is cut (the pipeline's callback has already run if the guard had ended). */
    private readonly onStall: (error: ExportStalledError) => void,
  ) {
    super();
    this.timer = setInterval(() => this.check(), (seconds * 1000) / 4).unref();
  }

  /** Nest pipes the guard into the response: that is the consumer watched. */
  override pipe<T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T {
    this.consumer = destination as unknown as Consumer;
    return super.pipe(destination, options);
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

  /** Ended whole, the guard still watches its consumer until that has handed the last byte on (check()). */
  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (error || !this.consumer) clearInterval(this.timer);
    callback(error);
  }

  private check(): void {
    const consumer = this.consumer;
    if (consumer ? consumer.writableFinished || consumer.destroyed : this.destroyed) {
      clearInterval(this.timer);
      return;
    }
    const pending = consumer?.writableLength ?? 0;
    const taken = pending < this.consumerPending;
    this.consumerPending = pending;
    if (taken || this.readableLength + this.writableLength + pending === 0) {
      this.waitingSince = null;
      return;
    }
    const now = Date.now();
    this.waitingSince ??= now;
    if (now - this.waitingSince >= this.seconds * 1000) this.cut();
  }

  private cut(): void {
    clearInterval(this.timer);
    const error = new ExportStalledError(this.seconds);
    this.onStall(error);
    if (!this.destroyed) this.destroy(error);
    const socket = this.consumer?.socket;
    if (socket && !socket.destroyed) socket.resetAndDestroy();
    else this.consumer?.destroy();
  }
}
