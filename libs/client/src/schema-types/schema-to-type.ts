/*
 * A JSON Schema (2020-12) as a TypeScript type, for `audit-trail-client types` (docs/contract.md §20).
 * The service takes only self-contained schemas (docs/contract.md §19: `$ref` to `#…` only, no
 * recursion, bounded size), so this small converter suffices: no reference is fetched and none loops.
 * A type is never narrower than the schema (an event the service takes always compiles); keywords
 * TypeScript cannot say (`minimum`, `pattern`, `not`, `if`…) leave the type as wide as without them.
 */

/** The JSON kinds of values; `integer` is a `number` to TypeScript. */
export type Kind = 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null';
const KINDS: readonly Kind[] = ['object', 'array', 'string', 'number', 'boolean', 'null'];

/** `$ref`s followed in a row at most (the service refuses a `$ref` that reaches itself; this is a second stop). */
const MAX_DEPTH = 64;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type SchemaObject = { [key: string]: Json };

/**
 * The TypeScript type of the values `schema` accepts among the kinds of `domain` (a member's kinds:
 * `actor` is a string, `context` an object or null), as source text; `root` resolves `$ref`s.
 */
export function schemaToType(schema: unknown, domain: readonly Kind[] = KINDS, root: unknown = schema): string {
  return new Converter(root).type(schema as Json, domain, 0, '');
}

/**
 * The type of one member (`actor`, `resource`, `context`) of the event a root schema describes: what
 * its `properties` say of it, with those of its `allOf` branches and `$ref` target (anything else at
 * the root, such as `anyOf`, cannot be split by member and leaves it as wide as its kinds).
 */
export function memberType(root: unknown, member: string, domain: readonly Kind[], indent = ''): string {
  const converter = new Converter(root);
  const parts: string[] = [];
  const visit = (schema: unknown, depth: number) => {
    if (schema === false) parts.push('never');
    if (!isObject(schema) || depth > MAX_DEPTH) return;
    if (isObject(schema.properties) && member in schema.properties)
      parts.push(converter.type(schema.properties[member]!, domain, depth, indent));
    if (Array.isArray(schema.allOf)) for (const branch of schema.allOf) visit(branch, depth + 1);
    if (typeof schema.$ref === 'string') visit(resolve(root, schema.$ref), depth + 1);
  };
  visit(root, 0);
  const kept = parts.filter((p) => p !== 'unknown');
  if (kept.includes('never')) return 'never';
  if (kept.length === 0) return anyOf(domain);
  return kept.length === 1 ? kept[0]! : kept.map(grouped).join(' & ');
}

class Converter {
  constructor(private readonly root: unknown) {}

  type(schema: Json, domain: readonly Kind[], depth: number, indent: string): string {
    if (domain.length === 0 || schema === false) return 'never';
    if (schema === true || typeof schema !== 'object' || schema === null || Array.isArray(schema) || depth > MAX_DEPTH)
      return anyOf(domain);
    const parts: string[] = [];
    const ref = schema.$ref;
    if (typeof ref === 'string') parts.push(this.type(resolve(this.root, ref) as Json, domain, depth + 1, indent));
    if ('const' in schema) parts.push(literals([schema.const!], domain));
    if (Array.isArray(schema.enum)) parts.push(literals(schema.enum, domain));
    if (Array.isArray(schema.allOf)) for (const s of schema.allOf) parts.push(this.type(s, domain, depth + 1, indent));
    for (const keyword of ['anyOf', 'oneOf'] as const) {
      const branches = schema[keyword];
      if (Array.isArray(branches)) parts.push(union(branches.map((s) => this.type(s, domain, depth + 1, indent))));
    }
    const own = ownKinds(schema, domain);
    if (own.length === 0) return 'never';
    if ('type' in schema || hasShapeKeywords(schema))
      parts.push(union(own.map((kind) => this.kind(kind, schema, depth, indent))));
    else if (parts.length === 0) parts.push(anyOf(domain));
    const kept = parts.filter((p) => p !== 'unknown');
    if (kept.includes('never')) return 'never';
    if (kept.length === 0) return 'unknown';
    return kept.length === 1 ? kept[0]! : kept.map(grouped).join(' & ');
  }

  /** The type of `schema`'s values of one kind. */
  private kind(kind: Kind, schema: SchemaObject, depth: number, indent: string): string {
    switch (kind) {
      case 'object':
        return this.object(schema, depth, indent);
      case 'array':
        return this.array(schema, depth, indent);
      case 'string':
      case 'number':
      case 'boolean':
      case 'null':
        return kind;
    }
  }

  private object(schema: SchemaObject, depth: number, indent: string): string {
    const properties = isObject(schema.properties) ? schema.properties : {};
    const required = new Set(
      Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : [],
    );
    const inner = `${indent}  `;
    const lines: string[] = [];
    for (const [name, member] of Object.entries(properties)) {
      const description = isObject(member) && typeof member.description === 'string' ? member.description : null;
      if (description !== null) lines.push(`${inner}${docComment(description, inner)}`);
      const optional = required.has(name) ? '' : '?';
      lines.push(`${inner}${propertyKey(name)}${optional}: ${this.type(member, KINDS, depth + 1, inner)};`);
    }
    for (const name of required) if (!(name in properties)) lines.push(`${inner}${propertyKey(name)}: unknown;`);
    // Closed only when the schema says so itself: a composition (allOf, $ref…) may declare more members.
    const closed =
      schema.additionalProperties === false ||
      (schema.unevaluatedProperties === false && !['allOf', 'anyOf', 'oneOf', '$ref'].some((k) => k in schema));
    if (!closed) lines.push(`${inner}[key: string]: unknown;`);
    return lines.length === 0 ? '{}' : `{\n${lines.join('\n')}\n${indent}}`;
  }

  private array(schema: SchemaObject, depth: number, indent: string): string {
    const items = schema.items;
    const rest =
      items === false
        ? null
        : items === undefined || items === true
          ? 'unknown'
          : this.type(items, KINDS, depth + 1, indent);
    if (!Array.isArray(schema.prefixItems)) return rest === null ? '[]' : `${grouped(rest)}[]`;
    // A prefix item may be absent (a shorter array passes prefixItems): optional elements.
    const first = schema.prefixItems.map((s) => `${grouped(this.type(s, KINDS, depth + 1, indent))}?`);
    return `[${[...first, ...(rest === null ? [] : [`...${grouped(rest)}[]`])].join(', ')}]`;
  }
}

/** The kinds a schema's own `type` allows within `domain`; all of the domain without `type`. */
function ownKinds(schema: SchemaObject, domain: readonly Kind[]): Kind[] {
  const declared = schema.type;
  if (declared === undefined) return [...domain];
  const names = (Array.isArray(declared) ? declared : [declared]).map((t) => (t === 'integer' ? 'number' : t));
  return domain.filter((kind) => names.includes(kind));
}

/** Keywords that shape an object's or an array's type, besides `type`. */
function hasShapeKeywords(schema: SchemaObject): boolean {
  return ['properties', 'required', 'additionalProperties', 'unevaluatedProperties', 'items', 'prefixItems'].some(
    (k) => k in schema,
  );
}

/** `const`/`enum` values as literal types, those of the domain's kinds only. */
function literals(values: Json[], domain: readonly Kind[]): string {
  const types = values.flatMap((value) => {
    const kind: Kind =
      value === null
        ? 'null'
        : Array.isArray(value)
          ? 'array'
          : (typeof value as 'object' | 'string' | 'number' | 'boolean');
    if (!domain.includes(kind)) return [];
    if (kind === 'object') return ['{ [key: string]: unknown }'];
    if (kind === 'array') return ['unknown[]'];
    return [JSON.stringify(value)];
  });
  return types.length === 0 ? 'never' : union([...new Set(types)]);
}

/** Any value of the kinds of `domain`. */
function anyOf(domain: readonly Kind[]): string {
  if (KINDS.every((k) => domain.includes(k))) return 'unknown';
  return union(domain.map((k) => (k === 'object' ? '{ [key: string]: unknown }' : k === 'array' ? 'unknown[]' : k)));
}

function union(types: string[]): string {
  if (types.includes('unknown')) return 'unknown';
  const kept = [...new Set(types.filter((t) => t !== 'never'))];
  if (kept.length === 0) return 'never';
  return kept.map(grouped).join(' | ');
}

/** A union or intersection, in parentheses, to be combined with others or made an array's items. */
function grouped(type: string): string {
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < type.length; i++) {
    const c = type[i]!;
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === '{' || c === '[' || c === '(') depth++;
    else if (c === '}' || c === ']' || c === ')') depth--;
    else if (depth === 0 && (c === '|' || c === '&')) return `(${type})`;
  }
  return type;
}

/** A member's name as a key: bare when it is an identifier, else a JSON string literal (never code). */
function propertyKey(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

function isObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value `pointer` (`#/$defs/amount`) designates in `root`; `true` (anything) when it designates none. */
function resolve(root: unknown, pointer: string): unknown {
  if (pointer === '#') return root;
  if (!pointer.startsWith('#/')) return true;
  let at: unknown = root;
  for (const raw of pointer.slice(2).split('/')) {
    let token: string;
    try {
      token = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return true;
    }
    if (!isObject(at) && !Array.isArray(at)) return true;
    if (!Object.prototype.hasOwnProperty.call(at, token)) return true;
    at = (at as Record<string, unknown>)[token];
  }
  return at;
}

/**
 * A description as a comment: it is an account's text, so nothing in it may end the comment (`*\/`)
 * or a line of it early; what it says cannot become code.
 */
export function docComment(text: string, indent: string): string {
  const safe = text
    .replace(/\*\//g, '*\\/')
    .replace(/\r\n?|[\u2028\u2029]/g, '\n')
    .split('\n')
    .map((line) => line.trimEnd());
  return safe.length === 1
    ? `/** ${safe[0]} */`
    : `/**\n${safe.map((l) => `${indent} * ${l}`).join('\n')}\n${indent} */`;
}
