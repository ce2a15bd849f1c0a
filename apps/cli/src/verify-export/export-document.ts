import { frontierIds, HashingV2, HEX_HASH, HEX_HASH_TEXT } from '@app/hashing';
import type { ExportedEvent, ExportedPrunedChain } from '@app/verification';

/** The wire types of an exported event and of a pruned chain, shared with the service that writes them. */
export type { ExportedEvent, ExportedPrunedChain };

export interface ExportDocument {
  /** Filters applied by the service; null when the header does not say (then assume filtered). */
  filters: { actor: unknown; action: unknown; resource: unknown; chain_id: unknown } | null;
  count: number | null;
  events: ExportedEvent[];
  /** The header's `pruned` (docs/contract.md §14), by chain id: unsigned helpers, confirmed only through a signed checkpoint. */
  pruned: Map<string, ExportedPrunedChain>;
  /** The header's `hashing` (docs/contract.md §17), by event id: the salts and commitments of version-2 events. */
  hashing: Map<string, HashingV2>;
}

/** The input cannot be verified at all (exit code 2). */
export class InputError extends Error {
  override readonly name = 'InputError';
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks the shape of a parsed export; a wrong shape is bad input, not tampering. */
export function readExportDocument(parsed: unknown): ExportDocument {
  if (!isObject(parsed) || !Array.isArray(parsed.data))
    throw new InputError(
      'not a JSON export: expected an object with a "data" array (GET /v1/events/export?format=json)',
    );
  const header = isObject(parsed.export) ? parsed.export : null;
  const filters = header && isObject(header.filters) ? (header.filters as ExportDocument['filters']) : null;
  const count = header && typeof header.count === 'number' ? header.count : null;
  const pruned = new Map<string, ExportedPrunedChain>();
  if (header && header.pruned !== undefined) {
    if (!Array.isArray(header.pruned)) throw new InputError('export.pruned must be an array');
    header.pruned.forEach((item, index) => {
      const chain = readPrunedChain(item, `export.pruned[${index}]`);
      pruned.set(chain.chainId, chain);
    });
  }
  const hashing = new Map<string, HashingV2>();
  if (header && header.hashing !== undefined) {
    if (!isObject(header.hashing)) throw new InputError('export.hashing must be an object (event id: hashing)');
    for (const [id, item] of Object.entries(header.hashing)) hashing.set(id, readHashing(item, `export.hashing.${id}`));
  }
  return { filters, count, events: parsed.data.map((item, index) => readEvent(item, index)), pruned, hashing };
}

/**
 * A version-2 event's hashing: its shape only (salts and commitments by field, strings). Whether
 * they give the event's hash is the verification's finding, not an input error.
 */
function readHashing(item: unknown, where: string): HashingV2 {
  const fields = (value: unknown): boolean =>
    isObject(value) &&
    Object.entries(value).every(([field, v]) =>
      field === 'context'
        ? isObject(v) && Object.values(v).every((m) => typeof m === 'string')
        : (field === 'actor' || field === 'resource') && typeof v === 'string',
    );
  if (!isObject(item) || item.version !== 2 || !fields(item.salts) || !fields(item.commitments))
    throw new InputError(
      `${where} must be { version: 2, salts, commitments }, each { actor?, resource?, context?: { member: string } }`,
    );
  return item as unknown as HashingV2;
}

/** A pruned chain of the header: its kept nodes must be exactly `frontierIds(lastPosition − 1)`, in that order. */
function readPrunedChain(item: unknown, where: string): ExportedPrunedChain {
  if (!isObject(item)) throw new InputError(`${where} is not an object`);
  const { chainId, lastPosition, lastHash, lastTimestamp, nodes } = item;
  const problems: string[] = [];
  if (typeof chainId !== 'string') problems.push('chainId must be a string');
  if (!Number.isSafeInteger(lastPosition) || (lastPosition as number) < 1)
    problems.push('lastPosition must be a positive integer');
  if (typeof lastHash !== 'string' || !HEX_HASH.test(lastHash)) problems.push(`lastHash must be ${HEX_HASH_TEXT}`);
  if (typeof lastTimestamp !== 'string') problems.push('lastTimestamp must be a string');
  if (problems.length === 0) {
    const expected = frontierIds((lastPosition as number) - 1);
    const ok =
      Array.isArray(nodes) &&
      nodes.length === expected.length &&
      nodes.every(
        (n: unknown, i) =>
          isObject(n) &&
          n.level === expected[i]!.level &&
          n.index === expected[i]!.index &&
          typeof n.hash === 'string' &&
          HEX_HASH.test(n.hash),
      );
    if (!ok)
      problems.push(`nodes must be the Merkle nodes over positions 1–${(lastPosition as number) - 1}, left to right`);
  }
  if (problems.length > 0) throw new InputError(`${where}: ${problems.join('; ')}`);
  return item as unknown as ExportedPrunedChain;
}

function readEvent(item: unknown, index: number): ExportedEvent {
  const where = `data[${index}]`;
  if (!isObject(item)) throw new InputError(`${where} is not an object`);
  const { id, timestamp, actor, action, resource, chain, hash, previousHash, context } = item;
  const problems: string[] = [];
  if (typeof id !== 'string') problems.push('id must be a string');
  if (typeof timestamp !== 'string') problems.push('timestamp must be a string');
  if (actor !== null && typeof actor !== 'string') problems.push('actor must be a string or null (erased)');
  if (typeof action !== 'string') problems.push('action must be a string');
  if (resource !== null && typeof resource !== 'string') problems.push('resource must be a string or null');
  if (context !== null && !isObject(context)) problems.push('context must be an object or null');
  if (typeof hash !== 'string' || !HEX_HASH.test(hash)) problems.push(`hash must be ${HEX_HASH_TEXT}`);
  if (typeof previousHash !== 'string' || !HEX_HASH.test(previousHash))
    problems.push(`previousHash must be ${HEX_HASH_TEXT}`);
  const chainOk =
    isObject(chain) &&
    typeof chain.id === 'string' &&
    typeof chain.name === 'string' &&
    Number.isSafeInteger(chain.position) &&
    (chain.position as number) >= 1;
  if (!chainOk) problems.push('chain must be { id, name, position } with a positive integer position');
  if (problems.length > 0)
    throw new InputError(`${where}${typeof id === 'string' ? ` (${id})` : ''}: ${problems.join('; ')}`);
  return item as unknown as ExportedEvent;
}
