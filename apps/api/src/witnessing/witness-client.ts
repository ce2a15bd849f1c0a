/*
 * The service's side of c2sp.org/tlog-witness add-checkpoint (docs/contract.md §18): the request
 * body, one request with a timeout, and what its answer means. No database, no Nest: the
 * WitnessingService decides what to send and what to store.
 */
import { httpPost, MAX_RESPONSE_BYTES, sinkAgents } from '../streams/sinks/outbound/http-post';

/** What one add-checkpoint request came to. */
export type AddCheckpointOutcome =
  /** 200: the body's lines (each `— <name> <base64>\n`), not yet verified. */
  | { kind: 'cosigned'; lines: string[] }
  /** 409 with Content-Type text/x.tlog.size: the witness's recorded size; resubmit from it. */
  | { kind: 'size'; size: number }
  /** Any other 4xx: the witness refuses this checkpoint (a fork, a bad proof or signature, an unknown origin). */
  | { kind: 'refused'; status: number; message: string }
  /** A network error, a timeout, a 5xx or an unreadable answer: worth retrying later. */
  | { kind: 'failed'; message: string };

export const TLOG_SIZE_TYPE = 'text/x.tlog.size';
const MAX_PROOF_LINES = 63;
/** How much of a refusal's body goes into the log line. */
const MESSAGE_CHARS = 200;

/** `old <size>\n`, one base64 hash per line, an empty line, the signed checkpoint. */
export function addCheckpointBody(oldSize: number, proof: readonly Buffer[], note: string): string {
  if (!Number.isSafeInteger(oldSize) || oldSize < 0) throw new RangeError('old must be a non-negative integer');
  if (proof.length > MAX_PROOF_LINES) throw new RangeError(`a proof has at most ${MAX_PROOF_LINES} hashes`);
  return `old ${oldSize}\n${proof.map((hash) => `${hash.toString('base64')}\n`).join('')}\n${note}`;
}

/** The answer's meaning from its status, Content-Type and body (pure: unit-tested). */
export function readAddCheckpointAnswer(
  status: number,
  contentType: string | null,
  body: string,
): AddCheckpointOutcome {
  const type = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (status === 200) {
    const lines = body.split('\n').filter((line) => line.length > 0);
    if (lines.length === 0 || !body.endsWith('\n'))
      return { kind: 'failed', message: 'a 200 without cosignature lines' };
    return { kind: 'cosigned', lines: lines.map((line) => `${line}\n`) };
  }
  if (status === 409 && type === TLOG_SIZE_TYPE) {
    const size = /^(0|[1-9][0-9]{0,15})\n?$/.exec(body);
    if (!size || !Number.isSafeInteger(Number(size[1])))
      return { kind: 'failed', message: `a 409 ${TLOG_SIZE_TYPE} whose body is not a size` };
    return { kind: 'size', size: Number(size[1]) };
  }
  const message = body
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .trim()
    .slice(0, MESSAGE_CHARS);
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return { kind: 'refused', status, message };
  return { kind: 'failed', message: `HTTP ${status}${message ? `: ${message}` : ''}` };
}

/**
 * POST <url>/add-checkpoint through the stream sinks' bounded request (outbound/http-post.ts, docs/contract.md
 * §16): no redirect followed (a 3xx is a failure), at most MAX_RESPONSE_BYTES of the answer read (a
 * longer one is a failure, its connection closed, nothing more buffered), abandoned after
 * `timeoutMs` (the body read included) or when `stop` aborts. Witnesses are the operator's
 * configuration (WITNESSES), not a tenant's, so a private address is allowed, as before.
 */
export async function postAddCheckpoint(
  url: string,
  body: string,
  timeoutMs: number,
  stop?: AbortSignal,
): Promise<AddCheckpointOutcome> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const agents = sinkAgents(true);
  try {
    const answer = await httpPost(
      agents,
      true,
      new URL(`${url}/add-checkpoint`),
      { 'content-type': 'text/plain; charset=utf-8' },
      Buffer.from(body, 'utf8'),
      stop ? AbortSignal.any([timeout, stop]) : timeout,
    );
    if (answer.truncated)
      return { kind: 'failed', message: `HTTP ${answer.status} with an answer over ${MAX_RESPONSE_BYTES} bytes` };
    return readAddCheckpointAnswer(answer.status, answer.headers['content-type'] ?? null, answer.body);
  } catch (error) {
    const cause = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : '';
    return { kind: 'failed', message: cause || String(error) };
  } finally {
    agents.http.destroy();
    agents.https.destroy();
  }
}

/**
 * The wait before the next attempt after `failures` consecutive failed or refused ones: the
 * interval, doubled with each failure, at most `maxMs` (0 failures: no wait).
 */
export function backoffMs(failures: number, intervalMs: number, maxMs: number): number {
  if (failures <= 0) return 0;
  return Math.min(maxMs, intervalMs * 2 ** Math.min(failures - 1, 30));
}
