import { createScanner, SyntaxKind } from 'jsonc-parser';
import { AppError, FieldError } from '../errors';
import { unstorableInText } from './storable-text';

/**
 * Parses a request body as I-JSON (RFC 7493, docs/contract.md §8): valid JSON, no object with two members
 * of the same name at any depth, no `__proto__` member (it cannot be stored as a plain key), and no
 * deeper than `maxDepth` levels. Every other member name is kept exactly as sent. Throws
 * 400 VALIDATION_ERROR naming the offending member by its path (`context.items[2].k`).
 *
 * JSON.parse checks the syntax (V8's parser is iterative: any depth is safe). It cannot see
 * duplicates (the last one wins), but it keeps one member per distinct name: the body has a
 * duplicate exactly when the parsed objects hold fewer members than the text has name separators
 * (every `:` outside a string of valid JSON is one). That count, and a walk of the parsed value
 * for depth and `__proto__` (which JSON.parse keeps as an own member), are the whole check of a
 * good body. (Before any of it, a body with more than `maxValues` values is refused on `body`:
 * what every later step costs grows with them.) Only a body that fails them is gone over by `checkMembers`, which walks the tokens
 * of jsonc-parser's scanner (it decodes escapes the way JSON.parse does: "k" and "\u006b" are
 * one name) to name the offending member. Both use explicit stacks: no recursion, whatever the depth.
 *
 * Last, every string of the body, member names included, is checked once here, for every route
 * (docs/contract.md §8: one check for every string): U+0000 or a lone surrogate is a 400 naming
 * the member. JSON.parse turns `\u0000` and `\ud800` escapes into those code units, which
 * PostgreSQL would refuse (a 500) or UTF-8 turn into U+FFFD (stored altered). Only a text that
 * holds such an escape (or a surrogate pair) is walked for them (`refuseUnstorableStrings`).
 */
export function parseIJson(text: string, maxDepth: number, maxValues = Infinity): unknown {
  const counted = count(text);
  if (counted.values > maxValues) {
    throw AppError.validation(
      [{ field: 'body', message: `body holds more than ${maxValues} values (object members and array items)` }],
      `The request body holds more than ${maxValues} values.`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw AppError.validation(
      [{ field: 'body', message: 'body is not valid JSON' }],
      'The request body is not valid JSON.',
    );
  }
  if (parsedMembers(value, maxDepth) !== counted.separators) checkMembers(text, maxDepth);
  if (MAY_HOLD_UNSTORABLE.test(text)) refuseUnstorableStrings(value);
  return value;
}

/**
 * A text that may hold U+0000 or a lone surrogate once parsed: an escape of either (or of half of
 * a pair), or a lone surrogate as it is (a text decoded from UTF-8 has none).
 */
const MAY_HOLD_UNSTORABLE = /\\u(?:0000|[dD][89a-fA-F])|[\uD800-\uDFFF]/u;

/** At most this many members are named (a body may hold MAX_BODY_VALUES strings). */
const MAX_NAMED = 100;

/** Refuses a parsed body with U+0000 or a lone surrogate in a string or member name, naming each. */
function refuseUnstorableStrings(body: unknown): void {
  const fields: FieldError[] = [];
  const pending: { value: unknown; path: string }[] = [{ value: body, path: '' }];
  for (let next = pending.pop(); next !== undefined && fields.length < MAX_NAMED; next = pending.pop()) {
    const { value, path } = next;
    if (typeof value === 'string') {
      const unstorable = unstorableInText(value);
      const field = path || 'body';
      if (unstorable !== null) fields.push({ field, message: `${field} must not contain ${unstorable}` });
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) pending.push({ value: value[i], path: `${path}[${i}]` });
    } else if (typeof value === 'object' && value !== null) {
      const members = Object.entries(value as Record<string, unknown>).map(([name, member]) => {
        const field = path ? `${path}.${name}` : name;
        const unstorable = unstorableInText(name);
        if (unstorable !== null) fields.push({ field, message: `member names must not contain ${unstorable}` });
        return { value: member, path: field };
      });
      pending.push(...members.reverse());
    }
  }
  if (fields.length > 0) throw AppError.validation(fields.slice(0, MAX_NAMED));
}

/** The members of every object of a parsed value; -1 if it nests deeper than maxDepth or holds `__proto__`. */
function parsedMembers(value: unknown, maxDepth: number): number {
  if (typeof value !== 'object' || value === null) return 0;
  let members = 0;
  const pending: { container: object; depth: number }[] = [{ container: value, depth: 1 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { container, depth } = next;
    if (depth > maxDepth) return -1;
    const items: unknown[] = Array.isArray(container) ? container : Object.values(container);
    if (!Array.isArray(container)) {
      if (Object.hasOwn(container, '__proto__')) return -1;
      members += items.length;
    }
    for (const item of items) {
      if (typeof item === 'object' && item !== null) pending.push({ container: item, depth: depth + 1 });
    }
  }
  return members;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * One pass over the text before it is parsed: the `:` outside strings (one per member, when the
 * text is valid JSON) and its values (members and array items at any depth: one per `,` and one
 * more per non-empty object or array). Safe on any text: it only counts.
 */
function count(text: string): { separators: number; values: number } {
  let separators = 0;
  let values = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === COLON) separators++;
    else if (c === COMMA) values++;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      let next = i + 1;
      while (next < text.length && isSpace(text.charCodeAt(next))) next++;
      const after = text.charCodeAt(next);
      if (after !== CLOSE_BRACE && after !== CLOSE_BRACKET) values++;
    } else if (c === QUOTE) {
      for (i++; i < text.length && text.charCodeAt(i) !== QUOTE; i++) if (text.charCodeAt(i) === BACKSLASH) i++;
    }
  }
  return { separators, values };
}

interface Container {
  /** Member names seen so far; null for an array. */
  names: Set<string> | null;
  /** Its path in the body ('' for the body itself). */
  path: string;
  /** The current member's name, or the current item's index. */
  at: string | number;
}

function checkMembers(text: string, maxDepth: number): void {
  const scanner = createScanner(text, true);
  const stack: Container[] = [];
  let expectName = false;
  const pathOfChild = (): string => {
    const parent = stack[stack.length - 1];
    if (!parent) return '';
    if (parent.names === null) return `${parent.path}[${parent.at}]`;
    return parent.path ? `${parent.path}.${parent.at}` : String(parent.at);
  };
  for (let token = scanner.scan(); token !== SyntaxKind.EOF; token = scanner.scan()) {
    const container = stack[stack.length - 1];
    if (token === SyntaxKind.OpenBraceToken || token === SyntaxKind.OpenBracketToken) {
      if (stack.length >= maxDepth) {
        const field = tooDeep(stack);
        throw AppError.validation([
          { field, message: `${field} is nested too deeply (a body may nest at most ${maxDepth} levels)` },
        ]);
      }
      const isObject = token === SyntaxKind.OpenBraceToken;
      stack.push({ names: isObject ? new Set() : null, path: pathOfChild(), at: isObject ? '' : 0 });
      expectName = isObject;
    } else if (token === SyntaxKind.CloseBraceToken || token === SyntaxKind.CloseBracketToken) {
      stack.pop();
      expectName = false;
    } else if (token === SyntaxKind.CommaToken && container) {
      if (container.names === null) container.at = (container.at as number) + 1;
      expectName = container.names !== null;
    } else if (token === SyntaxKind.StringLiteral && expectName && container?.names) {
      const name = scanner.getTokenValue();
      container.at = name;
      if (name === '__proto__') {
        throw AppError.validation([{ field: pathOfChild(), message: "keys named '__proto__' are not accepted" }]);
      }
      if (container.names.has(name)) {
        throw AppError.validation([{ field: pathOfChild(), message: `duplicate member name '${name}'` }]);
      }
      container.names.add(name);
      expectName = false;
    }
  }
}

/**
 * The member to name for nesting that goes too deep: the first member, going down the open
 * containers, whose value is not a list of objects (a batch's `events` is, its items' members are
 * not). So `events[3].actor` or `context` is named, not the body nor a path 64 levels long; `body`
 * when no member qualifies (a body that is itself nested arrays).
 */
function tooDeep(stack: readonly Container[]): string {
  for (let i = 1; i < stack.length; i++) {
    const inObject = stack[i - 1]!.names !== null;
    const listOfObjects = stack[i]!.names === null && stack[i + 1]?.names != null;
    if (inObject && !listOfObjects) return stack[i]!.path;
  }
  return 'body';
}
