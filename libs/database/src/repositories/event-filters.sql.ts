import { ulidToUuid, ulidToUuidOrNull } from '@app/common/ids';
import type { SearchTerm, TextField } from '@app/common';
import { events, chains } from './event-record';

/** The spec's event filters; bounds are exclusive unless `inclusive` (the export's period). */
export interface EventFilters {
  actor?: string;
  action?: string;
  resource?: string;
  chainId?: string;
  after?: Date;
  before?: Date;
  inclusive?: boolean;
  /** A parsed `q` (docs/contract.md §13): every term must hold. */
  search?: readonly SearchTerm[];
}

/** A statement's text (or part of one) and its parameters, `$1` … in order. */
export interface Sql {
  text: string;
  params: unknown[];
}

/**
 * The account's events with the spec's filters, chain joined for its name: the FROM and WHERE of
 * the list, the live tail, the statistics and the export, which all apply the same filters. Every
 * filter has an index ending in (timestamp, id), so pages are index range scans however large the table.
 * Parameters are appended to `params` (a query that has some already numbers on from them).
 */
export function matching(accountId: string, filters: EventFilters, params: unknown[] = []): Sql {
  const where = [`${events.column('accountId')} = $${params.push(ulidToUuid(accountId))}`];
  const add = (condition: (placeholder: string) => string, value: unknown) => {
    params.push(value);
    where.push(condition(`$${params.length}`));
  };
  const timestamp = events.column('timestamp');
  if (filters.actor !== undefined) add((p) => `${events.column('actor')} = ${p}`, filters.actor);
  if (filters.action !== undefined) add((p) => `${events.column('action')} = ${p}`, filters.action);
  if (filters.resource !== undefined) add((p) => `${events.column('resource')} = ${p}`, filters.resource);
  if (filters.chainId !== undefined)
    add((p) => `${events.column('chainId')} = ${p}`, ulidToUuidOrNull(filters.chainId, 'chn'));
  if (filters.after !== undefined)
    add((p) => `${timestamp} ${filters.inclusive ? '>=' : '>'} ${p}::timestamptz`, filters.after.toISOString());
  if (filters.before !== undefined)
    add((p) => `${timestamp} ${filters.inclusive ? '<=' : '<'} ${p}::timestamptz`, filters.before.toISOString());
  for (const term of filters.search ?? []) {
    const [condition, value] = searchCondition(term);
    add((p) => (term.negated ? `(${condition(p)}) IS NOT TRUE` : condition(p)), value);
  }
  return {
    text: `FROM events e JOIN chains c ON ${chains.column('id')} = ${events.column('chainId')} WHERE ${where.join(' AND ')}`,
    params,
  };
}

/** The column each text field of `q` compares. */
const TEXT_COLUMN: Record<TextField, string> = {
  actor: events.column('actor'),
  action: events.column('action'),
  resource: events.column('resource'),
  chain: chains.column('name'),
  chain_id: events.column('chainId'),
};

/**
 * One term of `q` as a condition on one parameter. A negated term is wrapped in `IS NOT TRUE`, so it
 * holds wherever the positive one does not: where it is false, and where it is null (a null
 * resource, an absent context path). `context.<path>:value` is a containment (`@>`) of the one-path
 * document `{"a":{"b":value}}`: it matches that scalar exactly, never an array holding it, never an
 * absent path, and the GIN index on `context` (jsonb_path_ops) answers it. `columns` are the text
 * fields' columns in another table (the rollup's, which keeps only some).
 */
export function searchCondition(
  term: SearchTerm,
  columns: Partial<Record<TextField, string>> = TEXT_COLUMN,
): [(p: string) => string, unknown] {
  switch (term.kind) {
    case 'text': {
      const column = columns[term.field]!;
      // A chain's id is stored as a uuid: a value that is none matches no event (`= NULL`).
      if (term.field === 'chain_id') return [(p) => `${column} = ${p}`, ulidToUuidOrNull(term.value, 'chn')];
      return term.prefix
        ? [(p) => `starts_with(${column}, ${p})`, term.value]
        : [(p) => `${column} = ${p}`, term.value];
    }
    case 'time':
      return [(p) => `${events.column('timestamp')} ${term.comparison} ${p}::timestamptz`, term.at.toISOString()];
    case 'context': {
      const scalar = term.value.kind === 'literal' ? term.value.json : JSON.stringify(term.value.value);
      const document = term.path.reduceRight((inner, key) => `{${JSON.stringify(key)}:${inner}}`, scalar);
      return [(p) => `${events.column('context')} @> ${p}::jsonb`, document];
    }
    case 'schema':
      // Null for an event no schema checked: it matches neither value (and every negated one).
      return [(p) => `${events.column('schemaValid')} = ${p}::boolean`, term.valid];
  }
}
