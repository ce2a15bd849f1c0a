import { instantMillis, instantMillisUp } from '../time/instant';
import * as peggy from 'peggy';
import {
  MAX_ACTION_LENGTH,
  MAX_ACTOR_LENGTH,
  MAX_CHAIN_NAME_LENGTH,
  MAX_CONTEXT_DEPTH,
  MAX_RESOURCE_LENGTH,
} from '../limits';
import { SEARCH_GRAMMAR } from './search-grammar';
import { unstorableInText } from '../json/storable-text';

/** `q`, in characters (docs/contract.md §13). */
export const MAX_SEARCH_QUERY_LENGTH = 2000;
/** Terms in one `q`: each is one condition of the statement. */
export const MAX_SEARCH_TERMS = 32;

/** The fields a term may name with a plain value; the first three also take a prefix (`value*`). */
export const TEXT_FIELDS = ['actor', 'action', 'resource', 'chain', 'chain_id'] as const;
export type TextField = (typeof TEXT_FIELDS)[number];
const PREFIX_FIELDS: readonly TextField[] = ['actor', 'action', 'resource'];
const MAX_LENGTH: Record<TextField, number> = {
  actor: MAX_ACTOR_LENGTH,
  action: MAX_ACTION_LENGTH,
  resource: MAX_RESOURCE_LENGTH,
  chain: MAX_CHAIN_NAME_LENGTH,
  chain_id: 30,
};

export type TimeComparison = '>=' | '>' | '<=' | '<';
/** A JSON scalar as it is written in `q` and in JSON: a string, or the text of a number, true, false or null. */
export type ContextValue = { kind: 'string'; value: string } | { kind: 'literal'; json: string };

/** One term of a parsed `q`; `negated` holds wherever the positive term does not (absent and null included). */
export type SearchTerm =
  | { kind: 'text'; field: TextField; value: string; prefix: boolean; negated: boolean }
  | { kind: 'time'; comparison: TimeComparison; at: Date; negated: boolean }
  | { kind: 'context'; path: string[]; value: ContextValue; negated: boolean }
  /** `schema:valid` / `schema:invalid` (docs/contract.md §19): events an action schema checked, by outcome. */
  | { kind: 'schema'; valid: boolean; negated: boolean };

/**
 * The values of `schema:` (docs/contract.md §19): `invalid` (`violated` is the same, the issue's
 * spelling) and `valid`. An event no schema checked matches neither.
 */
const SCHEMA_OUTCOMES: Readonly<Record<string, boolean>> = { valid: true, invalid: false, violated: false };

/** A parsed `q`: every term must hold. */
export interface SearchQuery {
  readonly text: string;
  readonly terms: readonly SearchTerm[];
}

/** What is wrong with a `q`, and where: the 0-based character offset into it. */
export class SearchQueryError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} (at offset ${offset})`);
    this.name = 'SearchQueryError';
  }
}

interface RawValue {
  text: string;
  quoted: boolean;
  offset: number;
}
interface RawTerm {
  negated: boolean;
  field: { name: string; path: string[]; offset: number };
  comparison: TimeComparison | null;
  value: RawValue;
  prefix: boolean;
  offset: number;
}

const parser = peggy.generate(SEARCH_GRAMMAR);

/** JSON's number grammar (RFC 8259 §6), and its three literals. */
const JSON_LITERAL = /^(-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?|true|false|null)$/;
const JSON_NUMBER = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * PostgreSQL's `numeric`, which jsonb keeps numbers in (src/backend/utils/adt/numeric.c): a
 * weight of at most 32767 base-10000 digits (a first significant digit below 10^131072), a scale
 * (digits after the point, as written) of at most 16383, and an exponent under INT_MAX / 2 even
 * for zero. Anything beyond is `22003 value overflows numeric format` in the containment's
 * `::jsonb`, on PostgreSQL 15 and on PGlite's 18 alike.
 */
const NUMERIC_MAX_DIGITS_BEFORE_POINT = 131072;
const NUMERIC_MAX_SCALE = 16383;
const NUMERIC_MAX_EXPONENT = 1073741823;

/** Why PostgreSQL's numeric cannot hold the JSON number `text`, or null when it can. */
function numericRangeProblem(text: string): string | null {
  const [, whole = '', fraction = '', exponentText = '0'] = JSON_NUMBER.exec(text) ?? [];
  const exponent = Number(exponentText);
  const range = `PostgreSQL's numeric holds at most ${NUMERIC_MAX_DIGITS_BEFORE_POINT} digits before the decimal point and ${NUMERIC_MAX_SCALE} after it`;
  if (Math.abs(exponent) >= NUMERIC_MAX_EXPONENT) return `the number's exponent is out of range (${range})`;
  if (fraction.length - exponent > NUMERIC_MAX_SCALE) return `the number underflows: ${range}`;
  const digits = (whole + fraction).replace(/^0+/, '');
  // The power of ten of the first significant digit; a zero has none.
  const magnitude =
    digits.length === 0 ? 0 : whole.length - 1 - (whole.length + fraction.length - digits.length) + exponent;
  return magnitude >= NUMERIC_MAX_DIGITS_BEFORE_POINT ? `the number overflows: ${range}` : null;
}

/**
 * Parses `q` into typed terms, or throws SearchQueryError naming the offset of what is wrong.
 * Nothing else is ever thrown, whatever the input.
 */
export function parseSearchQuery(text: string): SearchQuery {
  if (text.length > MAX_SEARCH_QUERY_LENGTH) {
    throw new SearchQueryError(`must be at most ${MAX_SEARCH_QUERY_LENGTH} characters`, MAX_SEARCH_QUERY_LENGTH);
  }
  let raw: RawTerm[];
  try {
    raw = parser.parse(text) as RawTerm[];
  } catch (error) {
    if (!(error instanceof parser.SyntaxError)) throw error;
    throw new SearchQueryError(syntaxProblem(text, error), error.location.start.offset);
  }
  if (raw.length > MAX_SEARCH_TERMS) {
    throw new SearchQueryError(`must have at most ${MAX_SEARCH_TERMS} terms`, raw[MAX_SEARCH_TERMS]!.offset);
  }
  return { text, terms: raw.map(toTerm) };
}

function toTerm(term: RawTerm): SearchTerm {
  const { field, value, negated } = term;
  if (unstorableInText(value.text) !== null)
    throw new SearchQueryError('a value may not hold U+0000 or a lone surrogate', value.offset);
  if (field.name === 'timestamp') {
    if (term.comparison === null) {
      throw new SearchQueryError('timestamp takes a comparison: >=, >, <= or <', value.offset);
    }
    // The list's `after`/`before` forms, read by the one parser (RFC 3339: years 0000–9999, leap
    // seconds), to the stored millisecond that keeps the same events (instantMillisUp).
    const up = term.comparison === '>=' || term.comparison === '<';
    const at = (up ? instantMillisUp : instantMillis)(value.text);
    if (at === null) {
      throw new SearchQueryError('expected an ISO 8601 date or date-time with an offset', value.offset);
    }
    return { kind: 'time', comparison: term.comparison, at: new Date(at), negated };
  }
  if (term.comparison !== null) {
    throw new SearchQueryError(`only timestamp takes ${term.comparison}`, value.offset - term.comparison.length);
  }
  if (field.name === 'context') {
    if (term.prefix) throw new SearchQueryError('context values take no prefix (*)', value.offset + value.text.length);
    if (field.path.length >= MAX_CONTEXT_DEPTH) {
      throw new SearchQueryError(`a context path has at most ${MAX_CONTEXT_DEPTH - 1} segments`, field.offset);
    }
    const literal = !value.quoted && JSON_LITERAL.test(value.text);
    const outOfRange = literal ? numericRangeProblem(value.text) : null;
    if (outOfRange !== null) throw new SearchQueryError(outOfRange, value.offset);
    return {
      kind: 'context',
      path: field.path,
      value: literal ? { kind: 'literal', json: value.text } : { kind: 'string', value: value.text },
      negated,
    };
  }
  if (field.name === 'schema' && field.path.length === 0) {
    const valid = value.quoted || term.prefix ? undefined : SCHEMA_OUTCOMES[value.text];
    if (valid === undefined) throw new SearchQueryError('schema takes invalid or valid', value.offset);
    return { kind: 'schema', valid, negated };
  }
  if (!isTextField(field.name)) {
    throw new SearchQueryError(
      `unknown field ${JSON.stringify(field.name)}; fields are ${[...TEXT_FIELDS, 'timestamp', 'context.<path>', 'schema'].join(', ')}`,
      field.offset,
    );
  }
  if (term.prefix && !PREFIX_FIELDS.includes(field.name)) {
    throw new SearchQueryError(`${field.name} takes no prefix (*)`, value.offset + value.text.length);
  }
  if (value.text.length === 0) throw new SearchQueryError(`${field.name} needs a value`, value.offset);
  if ([...value.text].length > MAX_LENGTH[field.name]) {
    throw new SearchQueryError(`${field.name} is at most ${MAX_LENGTH[field.name]} characters`, value.offset);
  }
  return { kind: 'text', field: field.name, value: value.text, prefix: term.prefix, negated };
}

function isTextField(name: string): name is TextField {
  return (TEXT_FIELDS as readonly string[]).includes(name);
}

/**
 * What a malformed `q` lacks, in words a person can act on (issue 40 item 10), read after "q ": a value
 * after `actor:`, the closing quote of a quoted value, the `:` after a field name; else what was
 * found where a term or a space should be.
 */
function syntaxProblem(text: string, error: peggy.parser.SyntaxError): string {
  const offset = error.location.start.offset;
  const before = text.slice(0, offset);
  const expected = new Set(
    (error.expected ?? []).map((e) => (e.type === 'literal' ? e.text : e.type === 'other' ? e.description : e.type)),
  );
  const found = error.found === null ? 'the end' : `'${error.found}'`;
  // An open quote runs to the end: the value's quote was never closed.
  const quote = /(^|[\s:<>=])"(?:\\["\\]|[^"\\])*$/.exec(before);
  if (error.found === null && quote) {
    return `needs a closing " for the value quoted at offset ${quote.index + quote[1]!.length}`;
  }
  const field = /(-?[A-Za-z0-9_]+(?:\.[^\s.:"\\]+)*:(?:>=|<=|>|<)?)$/.exec(before);
  if (before.endsWith('-')) return `needs a field name after '-' (terms are field:value, -field:value to negate)`;
  if (field) return `needs a value after '${field[1]}'${error.found === null ? '' : `, not ${found}`}`;
  if (expected.has(':')) {
    const name = /(-?[A-Za-z0-9_.]+)$/.exec(before)?.[1] ?? '';
    return `needs ':' and a value after the field name '${name}' (terms are field:value)`;
  }
  return `has ${found} where a new term (field:value) or a space should be`;
}

/** The text of a term, as `q` would write it: parseSearchQuery(formatSearchTerm(t)) gives t back. */
export function formatSearchTerm(term: SearchTerm): string {
  const sign = term.negated ? '-' : '';
  switch (term.kind) {
    case 'time':
      return `${sign}timestamp:${term.comparison}${term.at.toISOString()}`;
    case 'text':
      return `${sign}${term.field}:${quote(term.value)}${term.prefix ? '*' : ''}`;
    case 'context':
      return `${sign}context.${term.path.join('.')}:${term.value.kind === 'literal' ? term.value.json : quote(term.value.value)}`;
    case 'schema':
      return `${sign}schema:${term.valid ? 'valid' : 'invalid'}`;
  }
}

function quote(value: string): string {
  return `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}
