import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { REQUEST_ID } from '@app/common/ids';
import { answerClientErrors } from './common/client-errors';

/** Seconds a client is told to wait before it asks again while the service starts. */
const RETRY_AFTER_SECONDS = 5;

/**
 * What answers on the service's port while the service starts: from before the database is opened
 * and migrated (an upgrade of millions of events takes minutes: docs/performance.md) until the
 * application listens in its place. `/health/live` is 200 (the process is alive: an orchestrator
 * must not restart it mid-migration); everything else, `/health/ready` included, 503
 * SERVICE_UNAVAILABLE in the error envelope with Retry-After. Nothing here reads a body, a key or
 * the database.
 */
export async function listenWhileStarting(port: number, host: string): Promise<{ close(): Promise<void> }> {
  const server = createServer(answerStarting);
  answerClientErrors(server);
  // A connection kept alive here would be one the application never sees: every answer closes it.
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return { close: () => closeServer(server) };
}

function answerStarting(req: IncomingMessage, res: ServerResponse): void {
  const given = req.headers['x-request-id'];
  const requestId = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  const path = (req.url ?? '/').split('?')[0];
  const live = path === '/health/live' && (req.method === 'GET' || req.method === 'HEAD');
  const body = live
    ? { data: { status: 'ok' } }
    : {
        error: {
          code: 'SERVICE_UNAVAILABLE',
          message: 'The service is starting (migrating its database). Retry later.',
          details: {},
        },
      };
  res.writeHead(live ? 200 : 503, {
    'Content-Type': 'application/json; charset=utf-8',
    'X-Request-Id': requestId,
    'Cache-Control': 'no-store',
    Connection: 'close',
    ...(live ? {} : { 'Retry-After': String(RETRY_AFTER_SECONDS) }),
  });
  res.end(req.method === 'HEAD' ? undefined : JSON.stringify(body));
  // The request's body, if any, is not read: the connection closes after the answer.
  req.resume();
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
