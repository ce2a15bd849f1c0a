import { HEX_HASH, HEX_HASH_TEXT } from '@app/hashing';
import { InputError } from '../verify-export/export-document';

/** GET /v1/events/:id/proof's `data` (docs/contract.md §10). */
export interface InclusionProofFile {
  chainId: string;
  position: number;
  leafIndex: number;
  size: number;
  eventHash: string;
  rootHash: string;
  proof: string[];
}

/** GET /v1/chain/:chainId/consistency's `data` (docs/contract.md §10). */
export interface ConsistencyProofFile {
  chainId: string;
  from: number;
  to: number;
  fromRoot: string;
  toRoot: string;
  proof: string[];
}

type Fields = Record<string, unknown>;
const isObject = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isHex = (v: unknown): v is string => typeof v === 'string' && HEX_HASH.test(v);

/** The API's answer saved as is (`{ data: … }`), or its `data` alone. */
function dataOf(parsed: unknown, what: string): Fields {
  const data = isObject(parsed) && isObject(parsed.data) ? parsed.data : parsed;
  if (!isObject(data)) throw new InputError(`not ${what}: expected the API's JSON answer, { "data": { … } }`);
  return data;
}

function commonProblems(d: Fields): string[] {
  const problems: string[] = [];
  if (typeof d.chainId !== 'string' || d.chainId.length === 0) problems.push('chainId must be a chain id');
  if (!Array.isArray(d.proof) || !d.proof.every(isHex))
    problems.push('proof must be an array of 64-character lowercase hex hashes');
  return problems;
}

function fail(what: string, problems: string[]): void {
  if (problems.length > 0) throw new InputError(`not ${what}: ${problems.join('; ')}`);
}

export function readInclusionProof(parsed: unknown): InclusionProofFile {
  const what = 'an inclusion proof (GET /v1/events/:id/proof)';
  const d = dataOf(parsed, what);
  const problems = commonProblems(d);
  if (!isCount(d.position) || d.position < 1) problems.push('position must be a positive integer');
  if (!isCount(d.size)) problems.push('size must be a non-negative integer');
  else if (isCount(d.position) && d.size < d.position) problems.push('size must be at least position');
  if (!isCount(d.leafIndex) || d.leafIndex !== (d.position as number) - 1)
    problems.push('leafIndex must be position − 1');
  if (!isHex(d.eventHash)) problems.push(`eventHash must be ${HEX_HASH_TEXT}`);
  if (!isHex(d.rootHash)) problems.push(`rootHash must be ${HEX_HASH_TEXT}`);
  fail(what, problems);
  return d as unknown as InclusionProofFile;
}

export function readConsistencyProof(parsed: unknown): ConsistencyProofFile {
  const what = 'a consistency proof (GET /v1/chain/:chainId/consistency)';
  const d = dataOf(parsed, what);
  const problems = commonProblems(d);
  if (!isCount(d.from)) problems.push('from must be a non-negative integer');
  if (!isCount(d.to)) problems.push('to must be a non-negative integer');
  else if (isCount(d.from) && d.to < d.from) problems.push('to must be at least from');
  if (!isHex(d.fromRoot)) problems.push(`fromRoot must be ${HEX_HASH_TEXT}`);
  if (!isHex(d.toRoot)) problems.push(`toRoot must be ${HEX_HASH_TEXT}`);
  fail(what, problems);
  return d as unknown as ConsistencyProofFile;
}
