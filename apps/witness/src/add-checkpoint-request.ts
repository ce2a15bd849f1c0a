import { decodeBase64 } from '@app/hashing';

/*
 * The body of c2sp.org/tlog-witness's POST /add-checkpoint:
 *   "old " <size> "\n"          the size the client believes the witness last cosigned (0: none)
 *   (<base64 hash> "\n"){0,63}  the RFC 6962 consistency proof from that size to the checkpoint's
 *   "\n"
 *   <signed checkpoint note>
 */
export const MAX_PROOF_LINES = 63;

export interface AddCheckpointRequest {
  oldSize: number;
  proof: Buffer[];
  /** The signed note, as sent. */
  note: string;
}

export class BadRequestError extends Error {
  override readonly name = 'BadRequestError';
}

export function parseAddCheckpointRequest(body: Buffer): AddCheckpointRequest {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body);
  } catch {
    throw new BadRequestError('the body is not UTF-8');
  }
  const split = text.indexOf('\n\n');
  if (split < 0) throw new BadRequestError('the body is "old <size>", proof lines, an empty line and the checkpoint');
  const [oldLine = '', ...proofLines] = text.slice(0, split).split('\n');
  const size = /^old (0|[1-9][0-9]*)$/.exec(oldLine)?.[1];
  if (size === undefined || !Number.isSafeInteger(Number(size)))
    throw new BadRequestError('the first line is "old <size>", the size in decimal without leading zeros');
  if (proofLines.length > MAX_PROOF_LINES)
    throw new BadRequestError(`a consistency proof has at most ${MAX_PROOF_LINES} lines`);
  const proof = proofLines.map((line, i) => {
    const hash = decodeBase64(line);
    if (hash?.length !== 32) throw new BadRequestError(`proof line ${i + 1} is not a base64 32-byte hash`);
    return hash;
  });
  return { oldSize: Number(size), proof, note: text.slice(split + 2) };
}
