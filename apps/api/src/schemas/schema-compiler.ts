import Ajv2020 from 'ajv/dist/2020';
import type { ErrorObject, RegExpEngine, ValidateFunction } from 'ajv/dist/types';
import addFormats from 'ajv-formats';
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { RE2JS } from 're2js';

/** A schema's size as JSON text, at most (docs/contract.md §19: 400 beyond, naming `schema`). */
export const MAX_SCHEMA_BYTES = 64 * 1024;
/**
 * The body of PUT …/schemas/:action and of the preview, at most: a schema over MAX_SCHEMA_BYTES
 * within it is a 400 naming `schema` (docs/contract.md §19), a larger body a 413 like any other.
 */
export const SCHEMA_BODY_BYTES = 1024 * 1024;
/** Nesting of a schema's objects and arrays, the schema itself being 1. */
export const MAX_SCHEMA_DEPTH = 32;
/**
 * Object members and array items of a schema, at any depth. Ajv compiles about 0.2 ms per value on
 * the event loop (a schema of 1,500 values: 280–340 ms here), once per version per instance.
 */
export const MAX_SCHEMA_VALUES = 1_000;
/**
 * The same, counting each `$ref`'s target again where it is referenced: what one event's check can
 * walk at most per value of the event (no recursion: a `$ref` that reaches itself is refused).
 */
export const MAX_EXPANDED_SCHEMA_VALUES = 5_000;

/** `pattern`, `patternProperties` and `propertyNames` patterns of one schema, at most. */
export const MAX_SCHEMA_PATTERNS = 64;
/**
 * The time one event's check may spend in patterns: beyond, the check stops and the event fails
 * it (rule `budget`), so a schema that applies many patterns to many members costs milliseconds,
 * never seconds, whatever the event (threat model P8).
 */
export const CHECK_BUDGET_MS = 5;
/**
 * The time all the checks of one request (a batch's events) may take together: beyond, the request
 * is refused (400 VALIDATION_ERROR, rule `budget`, naming the first event left unchecked) and
 * nothing is stored, so one request never holds the instance for more than about this long plus
 * one event's check (threat model P8, P11).
 */
export const REQUEST_CHECK_BUDGET_MS = 50;
/** The checks of one request give the event loop back at least this often. */
export const CHECK_SLICE_MS = 10;
/** `uniqueItems` compares every pair of items unless they are scalars: allowed only on declared scalar items, at most this many. */
export const MAX_UNIQUE_ITEMS = 256;
const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);

const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** Thrown by a pattern once the check in progress is over its budget. */
class OverBudget extends Error {}

/** The deadline of the check in progress (checks are synchronous: one at a time). */
const budget = { until: Infinity, tests: 0 };

/** A schema the service does not take, and why (a 400 naming `schema`). */
export class SchemaRefused extends Error {}

/** One failed rule of a check: where in `{ actor, resource, context }` (`context.amount`), which keyword, what. */
export interface SchemaViolation {
  path: string;
  rule: string;
  message: string;
}

/** A compiled schema: the violation of `event`, or null when it holds. */
export type EventCheck = (event: {
  actor: string | null;
  resource: string | null;
  context: unknown;
}) => SchemaViolation | null;

/**
 * The regular expressions of `pattern`, `patternProperties` and `propertyNames` run on RE2JS, a
 * pure-JavaScript port of RE2: matching takes time linear in the input whatever the pattern, so
 * `(a+)+$` cannot make a check take seconds (docs/schemas.md). Syntax RE2 does not have
 * (backreferences, lookaround) is refused when the schema is saved.
 */
const RE2_ENGINE: RegExpEngine = Object.assign(
  (pattern: string) => {
    const compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
    // Ajv shares one compiled pattern per `toString()` in a validator: keep them apart.
    return {
      test: (input: string) => {
        if ((++budget.tests & 15) === 0 && performance.now() > budget.until) throw new OverBudget();
        return compiled.test(input);
      },
      toString: () => pattern,
    };
  },
  { code: 're2js' },
);

/**
 * Ajv (JSON Schema 2020-12) in strict mode: unknown keywords and formats are errors, not ignored;
 * formats are checked (ajv-formats, its fast regular expressions); nothing is fetched (no
 * `loadSchema`) and no compiled schema is kept by the instance (`addUsedSchema: false`, and
 * `removeSchema` after each compile), so accounts' schemas never see each other.
 */
const ajv = new Ajv2020({
  strict: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  allowUnionTypes: true,
  allErrors: false,
  addUsedSchema: false,
  validateFormats: true,
  logger: false,
  code: { regExp: RE2_ENGINE },
});
addFormats(ajv, { mode: 'fast' });

/**
 * Checks `schema` as untrusted input (threat model P6, P8) and compiles it: a JSON object of at
 * most MAX_SCHEMA_BYTES as JSON text, MAX_SCHEMA_DEPTH levels and MAX_SCHEMA_VALUES values, whose
 * `$ref`s point into the schema itself (`#`, `#/…`) and never reach themselves, that Ajv compiles
 * under 2020-12 in strict mode. Throws SchemaRefused saying what is wrong.
 */
export function compileSchema(schema: unknown): EventCheck {
  guardSchema(schema);
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema as object);
  } catch (error) {
    throw new SchemaRefused(`schema is not a valid JSON Schema 2020-12: ${describe(error)}`);
  } finally {
    ajv.removeSchema(schema as object);
  }
  return (event) => {
    budget.until = performance.now() + CHECK_BUDGET_MS;
    budget.tests = 0;
    try {
      return validate(event) ? null : violationOf(validate.errors?.[0]);
    } catch (error) {
      if (!(error instanceof OverBudget)) throw error;
      return {
        path: '',
        rule: 'budget',
        message: `checking the event against the schema took more than ${CHECK_BUDGET_MS} ms (its patterns); it is not accepted as valid (budget)`,
      };
    } finally {
      budget.until = Infinity;
    }
  };
}

/** Schemas compiled (or refused) by compileSchemaCached, by digest; beyond, the least recently used is forgotten. */
const COMPILED_CACHED = 256;
const compiled = new Map<string, EventCheck | SchemaRefused>();

/**
 * compileSchema, kept by the SHA-256 of the schema's JSON text (its refusal too): a PUT or a
 * preview repeating a schema does not compile it again (a large one costs ~140 ms of CPU).
 */
export function compileSchemaCached(schema: unknown): EventCheck {
  const digest = createHash('sha256')
    .update(JSON.stringify(schema) ?? 'undefined')
    .digest('hex');
  let outcome = compiled.get(digest);
  if (outcome === undefined) {
    try {
      outcome = compileSchema(schema);
    } catch (error) {
      if (!(error instanceof SchemaRefused)) throw error;
      outcome = error;
    }
    if (compiled.size >= COMPILED_CACHED) compiled.delete(compiled.keys().next().value!);
  } else {
    compiled.delete(digest);
  }
  compiled.set(digest, outcome);
  if (outcome instanceof SchemaRefused) throw outcome;
  return outcome;
}

/** The structural checks of compileSchema, before Ajv sees the schema. */
export function guardSchema(schema: unknown): void {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    throw new SchemaRefused('schema must be a JSON object (a JSON Schema 2020-12)');
  const bytes = Buffer.byteLength(JSON.stringify(schema), 'utf8');
  if (bytes > MAX_SCHEMA_BYTES)
    throw new SchemaRefused(`schema must be at most ${MAX_SCHEMA_BYTES} bytes as JSON text (it is ${bytes})`);
  const declared = (schema as Record<string, unknown>).$schema;
  if (declared !== undefined && declared !== DRAFT_2020_12)
    throw new SchemaRefused(`schema's $schema must be ${DRAFT_2020_12} when given`);
  const refs: { at: object; target: string }[] = [];
  walk(schema, 1, { values: 0, patterns: 0 }, refs);
  expandedSize(schema, refs);
}

/** Depth, values, and the keywords that would reach outside the schema. */
function walk(
  value: unknown,
  depth: number,
  count: { values: number; patterns: number },
  refs: { at: object; target: string }[],
): void {
  if (typeof value !== 'object' || value === null) return;
  if (depth > MAX_SCHEMA_DEPTH) throw new SchemaRefused(`schema must be at most ${MAX_SCHEMA_DEPTH} levels deep`);
  const entries: [string | null, unknown][] = Array.isArray(value)
    ? value.map((item) => [null, item])
    : Object.entries(value as Record<string, unknown>);
  count.values += entries.length;
  if (count.values > MAX_SCHEMA_VALUES)
    throw new SchemaRefused(`schema must hold at most ${MAX_SCHEMA_VALUES} values (object members and array items)`);
  if (!Array.isArray(value)) {
    const keywords = value as Record<string, unknown>;
    if (typeof keywords.pattern === 'string') count.patterns++;
    if (typeof keywords.patternProperties === 'object' && keywords.patternProperties !== null)
      count.patterns += Object.keys(keywords.patternProperties).length;
    if (count.patterns > MAX_SCHEMA_PATTERNS)
      throw new SchemaRefused(`schema must hold at most ${MAX_SCHEMA_PATTERNS} patterns (pattern, patternProperties)`);
    if (keywords.uniqueItems === true && !boundedUniqueItems(keywords))
      throw new SchemaRefused(
        `schema's uniqueItems needs items declared scalar ("type" among string, number, integer, boolean, null) and maxItems at most ${MAX_UNIQUE_ITEMS}: comparing other items costs the square of their number`,
      );
  }
  for (const [key, member] of entries) {
    // A keyword's value is a string; a property of that name (under `properties`) is an object.
    if (typeof member === 'string' && key !== null) {
      if (key === '$ref') {
        if (member !== '#' && !member.startsWith('#/'))
          throw new SchemaRefused(`schema's $ref "${member}" must point into the schema itself (# or #/…)`);
        refs.push({ at: value, target: member });
      } else if (
        key === '$id' ||
        key === '$dynamicRef' ||
        key === '$recursiveRef' ||
        key === '$dynamicAnchor' ||
        key === '$anchor'
      ) {
        throw new SchemaRefused(`schema must not use ${key}: only $ref to # or #/… is allowed`);
      }
    }
    walk(member, depth + 1, count, refs);
  }
}

/** `uniqueItems` whose cost stays linear and small: scalar `items`, `maxItems` ≤ MAX_UNIQUE_ITEMS. */
function boundedUniqueItems(keywords: Record<string, unknown>): boolean {
  const items = keywords.items;
  if (typeof items !== 'object' || items === null || Array.isArray(items)) return false;
  const type = (items as Record<string, unknown>).type;
  const types = Array.isArray(type) ? type : [type];
  const scalar = types.length > 0 && types.every((t) => typeof t === 'string' && SCALAR_TYPES.has(t));
  const max = keywords.maxItems;
  return scalar && typeof max === 'number' && Number.isInteger(max) && max >= 0 && max <= MAX_UNIQUE_ITEMS;
}

/** The JSON value `pointer` (`#/$defs/amount`) designates in `root`, or undefined. */
function resolvePointer(root: unknown, pointer: string): unknown {
  if (pointer === '#') return root;
  let at: unknown = root;
  for (const raw of pointer.slice(2).split('/')) {
    let token: string;
    try {
      token = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (typeof at !== 'object' || at === null || !Object.prototype.hasOwnProperty.call(at, token)) return undefined;
    at = (at as Record<string, unknown>)[token];
  }
  return at;
}

/**
 * The schema's size with every `$ref` counted as its target's size (memoized): refuses a `$ref` that
 * points at nothing, one that reaches itself (which would recurse without end on one value), and
 * a schema whose expansion exceeds MAX_EXPANDED_SCHEMA_VALUES (`$ref`s doubling at each level).
 */
function expandedSize(root: object, refs: readonly { at: object; target: string }[]): number {
  const targets = new Map<object, unknown>();
  for (const { at, target } of refs) {
    const resolved = resolvePointer(root, target);
    if (typeof resolved !== 'object' || resolved === null)
      throw new SchemaRefused(`schema's $ref "${target}" does not point at a schema object inside it`);
    targets.set(at, resolved);
  }
  const sizes = new Map<object, number>();
  const visiting = new Set<object>();
  const size = (value: unknown): number => {
    if (typeof value !== 'object' || value === null) return 1;
    const known = sizes.get(value);
    if (known !== undefined) return known;
    if (visiting.has(value)) throw new SchemaRefused('schema must not hold a $ref that reaches itself (recursion)');
    visiting.add(value);
    let total = 1;
    for (const member of Object.values(value)) total += size(member);
    const target = targets.get(value);
    if (target !== undefined) total += size(target);
    visiting.delete(value);
    if (total > MAX_EXPANDED_SCHEMA_VALUES)
      throw new SchemaRefused(
        `schema must hold at most ${MAX_EXPANDED_SCHEMA_VALUES} values with each $ref counted where it is used`,
      );
    sizes.set(value, total);
    return total;
  };
  return size(root);
}

/** `/context/items/0` and the failed keyword as the answer names them: `context.items[0]`. */
function violationOf(error: ErrorObject | undefined): SchemaViolation {
  if (!error) return { path: '', rule: 'schema', message: 'does not match the schema' };
  const segments = error.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const params = error.params as Record<string, unknown>;
  const missing = params.missingProperty ?? params.additionalProperty ?? params.unevaluatedProperty;
  if (typeof missing === 'string') segments.push(missing);
  const path = segments.reduce(
    (joined, segment) =>
      /^\d+$/.test(segment) && joined !== ''
        ? `${joined}[${segment}]`
        : joined === ''
          ? segment
          : `${joined}.${segment}`,
    '',
  );
  return { path, rule: error.keyword, message: `${error.message ?? 'does not match the schema'} (${error.keyword})` };
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > 300 ? `${message.slice(0, 300)}…` : message;
}
