import { performance } from 'node:perf_hooks';
import {
  CHECK_BUDGET_MS,
  compileSchema,
  compileSchemaCached,
  MAX_EXPANDED_SCHEMA_VALUES,
  MAX_SCHEMA_BYTES,
  MAX_SCHEMA_DEPTH,
  MAX_SCHEMA_PATTERNS,
  MAX_SCHEMA_VALUES,
  MAX_UNIQUE_ITEMS,
  SchemaRefused,
} from './schema-compiler';

const event = (context: unknown, actor: string | null = 'alice', resource: string | null = null) => ({
  actor,
  resource,
  context,
});

/** The refusal's message, or null when the schema compiles. */
function refusal(schema: unknown): string | null {
  try {
    compileSchema(schema);
    return null;
  } catch (error) {
    if (error instanceof SchemaRefused) return error.message;
    throw error;
  }
}

describe('compileSchema: a schema checks { actor, resource, context }', () => {
  const check = compileSchema({
    type: 'object',
    properties: {
      actor: { type: 'string', pattern: '^user:' },
      context: {
        type: 'object',
        properties: {
          amount: { type: 'number', minimum: 0 },
          lines: { type: 'array', items: { type: 'object', required: ['sku'] } },
          email: { type: 'string', format: 'email' },
        },
        required: ['amount'],
        unevaluatedProperties: false,
      },
    },
    required: ['context'],
  });

  it('null when the event holds', () => {
    expect(check(event({ amount: 3, lines: [{ sku: 'a' }], email: 'a@b.example' }, 'user:1'))).toBeNull();
  });

  it('names the path, the rule and what failed', () => {
    expect(check(event({ amount: -1 }, 'user:1'))).toEqual({
      path: 'context.amount',
      rule: 'minimum',
      message: 'must be >= 0 (minimum)',
    });
    expect(check(event({}, 'user:1'))).toMatchObject({ path: 'context.amount', rule: 'required' });
    expect(check(event({ amount: 1, lines: [{ sku: 'a' }, {}] }, 'user:1'))).toMatchObject({
      path: 'context.lines[1].sku',
      rule: 'required',
    });
    expect(check(event({ amount: 1, extra: true }, 'user:1'))).toMatchObject({
      path: 'context.extra',
      rule: 'unevaluatedProperties',
    });
    expect(check(event({ amount: 1, email: 'not an address' }, 'user:1'))).toMatchObject({
      path: 'context.email',
      rule: 'format',
    });
    expect(check(event({ amount: 1 }, 'bob'))).toMatchObject({ path: 'actor', rule: 'pattern' });
    expect(check(event(null, 'user:1'))).toMatchObject({ path: 'context', rule: 'type' });
  });
});

describe('compileSchema: a schema is untrusted input', () => {
  it('refuses what is not a JSON object', () => {
    expect(refusal([])).toMatch(/JSON object/);
    expect(refusal(true)).toMatch(/JSON object/);
  });

  it(`refuses more than ${MAX_SCHEMA_BYTES} bytes as JSON text`, () => {
    expect(refusal({ description: 'x'.repeat(MAX_SCHEMA_BYTES) })).toMatch(/at most 65536 bytes/);
  });

  it(`refuses more than ${MAX_SCHEMA_DEPTH} levels and more than ${MAX_SCHEMA_VALUES} values`, () => {
    let deep: object = { type: 'object' };
    for (let i = 0; i < MAX_SCHEMA_DEPTH; i++) deep = { properties: { a: deep } };
    expect(refusal(deep)).toMatch(/levels deep/);
    const wide = { properties: Object.fromEntries(Array.from({ length: MAX_SCHEMA_VALUES }, (_, i) => [`p${i}`, {}])) };
    expect(refusal(wide)).toMatch(/at most 1000 values/);
  });

  it('refuses a $ref outside the schema, $id, $anchor and $dynamicRef; takes # and #/…', () => {
    expect(refusal({ $ref: 'https://example.com/schema.json' })).toMatch(/must point into the schema itself/);
    expect(refusal({ $ref: 'other.json#/x' })).toMatch(/must point into the schema itself/);
    expect(refusal({ $id: 'https://example.com/s' })).toMatch(/must not use \$id/);
    expect(refusal({ $dynamicRef: '#meta' })).toMatch(/must not use \$dynamicRef/);
    expect(refusal({ $defs: { a: { $anchor: 'a' } } })).toMatch(/must not use \$anchor/);
    expect(refusal({ $ref: '#/$defs/missing' })).toMatch(/does not point at a schema object/);
    expect(refusal({ $defs: { n: { type: 'number' } }, properties: { context: { $ref: '#/$defs/n' } } })).toBeNull();
    expect(refusal({ $schema: 'http://json-schema.org/draft-07/schema#' })).toMatch(/\$schema must be/);
  });

  it('refuses a $ref that reaches itself, and refs that double at each level', () => {
    expect(refusal({ anyOf: [{ $ref: '#' }] })).toMatch(/reaches itself/);
    expect(refusal({ $defs: { a: { $ref: '#/$defs/b' }, b: { items: { $ref: '#/$defs/a' } } } })).toMatch(
      /reaches itself/,
    );
    const defs: Record<string, object> = { d0: { type: 'string' } };
    for (let i = 1; i <= 20; i++)
      defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i - 1}` }, { $ref: `#/$defs/d${i - 1}` }] };
    expect(refusal({ $defs: defs, properties: { actor: { $ref: '#/$defs/d20' } } })).toMatch(
      new RegExp(`at most ${MAX_EXPANDED_SCHEMA_VALUES} values with each \\$ref`),
    );
  });

  it('strict: refuses unknown keywords and formats, and what is not JSON Schema', () => {
    expect(refusal({ type: 'object', propertees: {} })).toMatch(/unknown keyword/);
    expect(refusal({ type: 'string', format: 'no-such-format' })).toMatch(/unknown format/);
    expect(refusal({ type: 'strnig' })).toMatch(/not a valid JSON Schema/);
    expect(refusal({ minimum: '3' })).toMatch(/not a valid JSON Schema/);
  });

  it('refuses a pattern RE2 cannot run in linear time (backreferences, lookaround), naming it', () => {
    expect(refusal({ properties: { actor: { pattern: '(a)\\1' } } })).toMatch(/not a valid JSON Schema/);
    expect(refusal({ properties: { actor: { pattern: '(?=a)a' } } })).toMatch(/not a valid JSON Schema/);
  });

  it('a catastrophic pattern checks a long string in milliseconds (linear time)', () => {
    const check = compileSchema({
      properties: {
        actor: { pattern: '^(a+)+$' },
        context: { patternProperties: { '^(a|aa)+$': { type: 'string' } }, propertyNames: { pattern: '(x+x+)+y' } },
      },
    });
    const long = `${'a'.repeat(30_000)}!`;
    check(event({}, long)); // warm up
    const started = performance.now();
    const violation = check(event({ [`${'x'.repeat(200)}`]: 1 }, long));
    const elapsed = performance.now() - started;
    expect(violation).toMatchObject({ path: 'actor', rule: 'pattern' });
    expect(elapsed).toBeLessThan(50);
    const started2 = performance.now();
    expect(check(event({ ['x'.repeat(5_000)]: 1 }, 'a'))).toMatchObject({ rule: 'pattern' });
    expect(performance.now() - started2).toBeLessThan(50);
  });

  it(`refuses more than ${MAX_SCHEMA_PATTERNS} patterns; a check that spends more than ${CHECK_BUDGET_MS} ms in patterns stops, not valid (budget)`, () => {
    const many = Object.fromEntries(
      Array.from({ length: MAX_SCHEMA_PATTERNS + 1 }, (_, i) => [`p${i}`, { pattern: `^${i}` }]),
    );
    expect(refusal({ properties: { context: { properties: many } } })).toMatch(/at most 64 patterns/);
    // Every member of a large context against many patterns: milliseconds, then the budget ends it.
    const branches = [
      ...Array.from({ length: 60 }, (_, i) => ({ type: 'string', pattern: `^x${i}` })),
      { type: 'string' },
    ];
    const check = compileSchema({ properties: { context: { additionalProperties: { anyOf: branches } } } });
    const context = Object.fromEntries(Array.from({ length: 999 }, (_, i) => [`k${i}`, 'y'.repeat(30)]));
    check(event(context));
    const started = performance.now();
    expect(check(event(context))).toMatchObject({ path: '', rule: 'budget' });
    expect(performance.now() - started).toBeLessThan(CHECK_BUDGET_MS + 20);
    // The same schema on a small context: checked in full.
    expect(check(event({ k: 'y' }))).toBeNull();
  });

  it('schemas do not see each other (one Ajv, nothing kept): the same schema twice, two different ones', () => {
    const a = compileSchema({ properties: { actor: { const: 'a' } } });
    const b = compileSchema({ properties: { actor: { const: 'b' } } });
    const a2 = compileSchema({ properties: { actor: { const: 'a' } } });
    expect(a(event(null, 'a'))).toBeNull();
    expect(b(event(null, 'a'))).not.toBeNull();
    expect(a2(event(null, 'a'))).toBeNull();
  });
});

describe('compileSchema: uniqueItems only where its cost stays linear and small (threat model P8)', () => {
  it('refuses uniqueItems over items not declared scalar, or without maxItems at most MAX_UNIQUE_ITEMS', () => {
    expect(refusal({ uniqueItems: true })).toMatch(/uniqueItems/);
    expect(refusal({ uniqueItems: true, items: { type: 'object' }, maxItems: 10 })).toMatch(/uniqueItems/);
    expect(refusal({ uniqueItems: true, items: { type: ['string', 'object'] }, maxItems: 10 })).toMatch(/uniqueItems/);
    expect(refusal({ uniqueItems: true, items: { type: 'string' } })).toMatch(/uniqueItems/);
    expect(refusal({ uniqueItems: true, items: { type: 'string' }, maxItems: MAX_UNIQUE_ITEMS + 1 })).toMatch(
      /uniqueItems/,
    );
    expect(refusal({ properties: { a: { uniqueItems: true, items: {}, maxItems: 5 } } })).toMatch(/uniqueItems/);
  });

  it('takes uniqueItems over declared scalar items with a small maxItems, and checks it', () => {
    const schema = {
      properties: { context: { uniqueItems: true, items: { type: ['string', 'integer'] }, maxItems: 8 } },
    };
    expect(refusal(schema)).toBeNull();
    const check = compileSchema(schema);
    expect(check(event(['a', 1, 'b']))).toBeNull();
    expect(check(event(['a', 'a']))?.rule).toBe('uniqueItems');
    expect(refusal({ uniqueItems: false })).toBeNull();
  });
});

describe('compileSchemaCached: a repeated schema is not compiled again (threat model P8)', () => {
  it('gives the same check for the same schema text, another for another, and the same refusal', () => {
    const big = {
      properties: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`p${i}`, { type: 'string' }])),
    };
    const started = performance.now();
    const first = compileSchemaCached(big);
    const compiling = performance.now() - started;
    const again = performance.now();
    expect(compileSchemaCached(JSON.parse(JSON.stringify(big)))).toBe(first);
    expect(performance.now() - again).toBeLessThan(Math.max(5, compiling / 3));
    expect(compileSchemaCached({ ...big, required: ['p1'] })).not.toBe(first);
    expect(() => compileSchemaCached({ uniqueItems: true })).toThrow(SchemaRefused);
    expect(() => compileSchemaCached({ uniqueItems: true })).toThrow(/uniqueItems/);
  });
});
