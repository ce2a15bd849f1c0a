import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, Socket } from 'node:net';

/**
 * Stops an HTTP server without dropping a request it received. Attached before the server
 * listens, it knows every open connection and every request not yet answered. `stop`:
 * - refuses new connections (the listening socket is closed);
 * - answers every request, those in progress and those that still arrive on an open keep-alive
 *   connection, with `Connection: close`, so the client does not send another one on it and Node
 *   closes the connection once the response is out;
 * - leaves a connection idle at that moment to the keep-alive timeout it announced
 *   (`Keep-Alive: timeout=5`): a client may be sending a request on it right now, and closing
 *   it earlier would drop that request unanswered. (Node's own `server.close()` closes idle
 *   connections at once, with that race; the listening socket is closed here with net's.)
 * - resolves once no connection is left, or at `within` ms, when the connections still open
 *   (an export still streaming, a request whose body never came) are cut.
 */
export class HttpDrain {
  private readonly connections = new Set<Socket>();
  private readonly unanswered = new Set<ServerResponse>();
  private stopping = false;
  private changed: (() => void) | null = null;

  constructor(private readonly server: Server) {
    server.on('connection', (socket: Socket) => {
      this.connections.add(socket);
      socket.once('close', () => {
        this.connections.delete(socket);
        this.changed?.();
      });
    });
    // Before Express's listener, so that the header is set before any handler can answer.
    server.prependListener('request', (_request: IncomingMessage, response: ServerResponse) => this.received(response));
  }

  /** Requests received and not yet answered. */
  get inFlight(): number {
    return this.unanswered.size;
  }

  /** Resolves to the number of connections cut at `within` ms (0: every one ended by itself). */
  async stop(within: number): Promise<number> {
    this.stopping = true;
    for (const response of this.unanswered) closeAfter(response);
    if (this.server.listening) NetServer.prototype.close.call(this.server);
    const ended = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), Math.max(0, within));
      this.changed = () => {
        if (this.connections.size > 0) return;
        clearTimeout(timer);
        resolve(true);
      };
      this.changed();
    });
    this.changed = null;
    if (ended) return 0;
    const cut = this.connections.size;
    for (const socket of this.connections) socket.destroy();
    return cut;
  }

  private received(response: ServerResponse): void {
    this.unanswered.add(response);
    if (this.stopping) closeAfter(response);
    response.once('close', () => this.unanswered.delete(response));
  }
}

function closeAfter(response: ServerResponse): void {
  if (!response.headersSent) response.setHeader('Connection', 'close');
}
