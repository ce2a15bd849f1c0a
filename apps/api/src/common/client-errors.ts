import { randomUUID } from 'node:crypto';
import { maxHeaderSize, STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { AppError } from '@app/common/errors/app-error';
import { statusOf } from '@app/common/errors/error-code';

/** How long the rest of a refused request is read (and dropped) before its connection is closed. */
const DRAIN_MS = 5_000;

/** A connection whose request could not be parsed, with the response it is attached to, if any. */
type ClientSocket = Socket & { _httpMessage?: { headersSent: boolean } | null };

/**
 * Answers the requests Node's HTTP parser refuses before any route sees them (docs/contract.md §5,
 * §8) with the error envelope and the headers every answer has, instead of Node's bare status
 * line: a request line and headers over the server's limit (16 KiB unless configured) are `431
 * REQUEST_HEADER_FIELDS_TOO_LARGE`, a request not received in time `408 REQUEST_TIMEOUT`, chunk
 * extensions over their limit `413 PAYLOAD_TOO_LARGE`, anything else that is not HTTP/1.1 (a bad
 * request line, a bad header) `400 VALIDATION_ERROR`. Installed on every server that listens on
 * the service's port: the application's (configureApp, so e2e tests have it too) and the one
 * answering while it starts.
 *
 * The answer is written and the connection half-closed, and what the client still sends is read
 * and dropped for up to DRAIN_MS: closing at once with unread data would reset the connection
 * (with 200 KB of headers, the client would see a reset, not the answer). A connection with a
 * response already under way (a pipelined request) is closed without an answer, as Node does once
 * that response has started: an answer now would be read as the earlier request's.
 */
export function answerClientErrors(server: Server): void {
  const answered = new WeakSet<Socket>();
  server.on('clientError', (error: NodeJS.ErrnoException, socket: ClientSocket) => {
    // The parser reports every later chunk of a refused request again: it was answered once.
    if (answered.has(socket)) return;
    answered.add(socket);
    if (error.code === 'ECONNRESET' || !socket.writable || socket._httpMessage) {
      socket.destroy();
      return;
    }
    socket.end(responseText(errorFor(error)));
    socket.resume();
    setTimeout(() => socket.destroy(), DRAIN_MS).unref();
  });
}

function errorFor(error: NodeJS.ErrnoException): AppError {
  switch (error.code ?? '') {
    case 'HPE_HEADER_OVERFLOW':
      return new AppError(
        'REQUEST_HEADER_FIELDS_TOO_LARGE',
        `The request line and headers are larger than ${maxHeaderSize} bytes.`,
        { limitBytes: maxHeaderSize },
      );
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new AppError('PAYLOAD_TOO_LARGE', 'The request body’s chunk extensions are too large.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError('REQUEST_TIMEOUT', 'The request was not received in time.');
    default:
      return AppError.validation(
        [{ field: 'request', message: 'the request line or a header is not valid HTTP/1.1' }],
        'The request is not valid HTTP/1.1.',
      );
  }
}

/** The whole HTTP/1.1 response, as app.setup.ts's middleware and the exception filter would have made it. */
function responseText(error: AppError): string {
  const status = statusOf(error.code);
  const body = JSON.stringify({ error: { code: error.code, message: error.message, details: error.details } });
  const headers = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    'X-Request-Id': randomUUID(),
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-store',
    Connection: 'close',
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${lines.join('')}\r\n${body}`;
}
