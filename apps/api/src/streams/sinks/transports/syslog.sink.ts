import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { asError } from '@app/common';
import { bounded, networkFailure } from '../delivery-failure';
import { bareHost, resolveAllowed } from '../outbound/resolve';
import type { Delivery, Sink, SinkBatch, SinkTarget } from '../sink';
import { syslogFrame } from './syslog-frame';
import { socketUrlProblem, type SinkKind } from '../sink-kind';

/**
 * `syslog` (`syslog://`, TCP) and `syslog+tls://` (RFC 5425, verified against Node's CA store):
 * one connection kept open per sink, opened again (resolved and checked again) after any error.
 * A batch is acknowledged once all its messages are written and the socket has flushed them.
 */
export class SyslogSink implements Sink {
  private socket: Socket | null = null;
  private readonly host: string;
  private readonly port: number;
  private readonly secure: boolean;

  constructor(private readonly target: SinkTarget) {
    const url = new URL(target.url);
    this.host = bareHost(url.hostname);
    this.port = Number(url.port);
    this.secure = url.protocol === 'syslog+tls:';
  }

  async deliver(batch: SinkBatch, signal: AbortSignal): Promise<Delivery> {
    try {
      const payload = Buffer.concat(batch.events.map((event) => syslogFrame(this.target, event)));
      await bounded(this.target, signal, async (bound) => {
        const socket = this.socket ?? (await this.open(bound));
        await flushed(socket, payload, bound);
      });
      return { ok: true };
    } catch (error) {
      this.drop();
      return networkFailure(this.target, error);
    }
  }

  close(): Promise<void> {
    const socket = this.socket;
    this.socket = null;
    if (!socket || socket.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      socket.once('close', () => resolve());
      socket.end();
      setTimeout(() => socket.destroy(), 1000).unref();
    });
  }

  private drop(): void {
    this.socket?.destroy();
    this.socket = null;
  }

  /** Connects to the first allowed address that answers; the TLS name checked is the URL's host. */
  private async open(signal: AbortSignal): Promise<Socket> {
    const addresses = await resolveAllowed(this.host, this.target.allowPrivateNetworks);
    let failure: unknown;
    for (const { address } of addresses) {
      try {
        const socket = await this.connectTo(address, signal);
        socket.on('error', () => this.forget(socket));
        socket.on('close', () => this.forget(socket));
        socket.resume(); // a collector may answer nothing, or anything: never buffered
        this.socket = socket;
        return socket;
      } catch (error) {
        if (signal.aborted) throw error;
        failure = error;
      }
    }
    throw failure;
  }

  private connectTo(address: string, signal: AbortSignal): Promise<Socket> {
    const socket = this.secure
      ? tlsConnect({
          host: address,
          port: this.port,
          servername: isIP(this.host) === 0 ? this.host : undefined,
          ...(this.target.ca ? { ca: this.target.ca } : {}),
        })
      : netConnect({ host: address, port: this.port });
    const ready = this.secure ? 'secureConnect' : 'connect';
    return new Promise((resolve, reject) => {
      const fail = (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        socket.destroy();
        reject(asError(error));
      };
      const onAbort = () => fail(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      socket.once('error', fail);
      socket.once(ready, () => {
        signal.removeEventListener('abort', onAbort);
        socket.off('error', fail);
        resolve(socket);
      });
    });
  }

  private forget(socket: Socket): void {
    if (this.socket === socket) this.socket = null;
  }
}

/** Writes `payload` and waits until the socket has handed it to the kernel. */
function flushed(socket: Socket, payload: Buffer, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      socket.destroy();
      reject(asError(signal.reason));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    socket.write(payload, (error) => {
      signal.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve();
    });
  });
}

/** `syslog`: syslog://host:port (TCP) or syslog+tls://host:port (RFC 5425), in any format, cef included. */
export const syslogKind: SinkKind<'syslog'> = {
  kind: 'syslog',
  formats: ['native', 'ocsf', 'cef'],
  fields: {},
  urlProblem: (url) =>
    socketUrlProblem(url, ['syslog:', 'syslog+tls:'], 'must be syslog://host:port or syslog+tls://host:port'),
  open: (target) => new SyslogSink(target),
};
