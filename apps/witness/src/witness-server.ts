import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddCheckpointOutcome, Witness } from './witness';

/** Room for a checkpoint note (signed-note.ts's MAX_NOTE_BYTES, 64 KiB) and 63 proof lines. */
export const MAX_BODY_BYTES = 72 * 1024;

export interface ServerOptions {
  /** Where unexpected errors go; responses only ever say "internal error". */
  error?: (message: string) => void;
}

class BodyTooLargeError extends Error {}

/** The witness over HTTP: POST /add-checkpoint (c2sp.org/tlog-witness) and nothing else. */
export function createWitnessServer(witness: Witness, options: ServerOptions = {}): Server {
  const reportError = options.error ?? ((message: string) => process.stderr.write(`${message}\n`));
  return createServer((req, res) => {
    handle(witness, req, res).catch((error: unknown) => {
      reportError(`add-checkpoint failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      if (!res.headersSent) send(res, 500, 'internal error');
      else res.destroy();
    });
  });
}

async function handle(witness: Witness, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '').split('?', 1)[0];
  if (path !== '/add-checkpoint') return send(res, 404, 'not found');
  if (req.method !== 'POST') {
    res.setHeader('Allow', 'POST');
    return send(res, 405, 'add-checkpoint takes POST');
  }
  let body: Buffer;
  try {
    body = await readBody(req);
  } catch (error) {
    if (!(error instanceof BodyTooLargeError)) throw error;
    res.setHeader('Connection', 'close');
    res.on('finish', () => req.destroy());
    return send(res, 413, `the body is larger than ${MAX_BODY_BYTES} bytes`);
  }
  respond(res, await witness.addCheckpoint(body));
}

function respond(res: ServerResponse, outcome: AddCheckpointOutcome): void {
  switch (outcome.kind) {
    case 'cosigned':
      return send(res, 200, outcome.lines);
    case 'size-conflict':
      return send(res, 409, `${outcome.knownSize}\n`, 'text/x.tlog.size');
    case 'refused':
      return send(res, outcome.status, outcome.message);
  }
}

function send(res: ServerResponse, status: number, body: string, contentType = 'text/plain; charset=utf-8'): void {
  const text = body.endsWith('\n') ? body : `${body}\n`;
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) return Promise.reject(new BodyTooLargeError());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer): void => {
      length += chunk.length;
      if (length <= MAX_BODY_BYTES) return void chunks.push(chunk);
      req.off('data', onData);
      reject(new BodyTooLargeError());
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
