import { HEX_HASH, HEX_HASH_TEXT } from '@app/hashing';
import type { ExportedEvent } from '@app/verification';

/** The wire type of an exported event, shared with the service that writes it. */
export type { ExportedEvent };

export interface ExportDocument {
  /** Filters applied by the service; null when the header does not say (then assume filtered). */
  filters: { actor: unknown; action: unknown; resource: unknown; chain_id: unknown } | null;
  count: number | null;
  events: ExportedEvent[];
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
  return { filters, count, events: parsed.data.map((item, index) => readEvent(item, index)) };
}

function readEvent(item: unknown, index: number): ExportedEvent {
  const where = `data[${index}]`;
  if (!isObject(item)) throw new InputError(`${where} is not an object`);
  const { id, timestamp, actor, action, resource, chain, hash, previousHash, context } = item;
  const problems: string[] = [];
  if (typeof id !== 'string') problems.push('id must be a string');
  if (typeof timestamp !== 'string') problems.push('timestamp must be a string');
  if (typeof actor !== 'string') problems.push('actor must be a string');
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
