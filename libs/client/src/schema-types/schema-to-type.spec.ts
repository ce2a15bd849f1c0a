import { declarationsFor } from './declarations';
import { docComment, memberType, schemaToType } from './schema-to-type';

describe('JSON Schema to TypeScript (audit-trail-client types, contract §20)', () => {
  it('says the kinds, literals and compositions TypeScript can say', () => {
    expect(schemaToType({ type: 'string', pattern: '^a' })).toBe('string');
    expect(schemaToType({ type: 'integer', minimum: 0 })).toBe('number');
    expect(schemaToType({ type: ['string', 'null'] })).toBe('string | null');
    expect(schemaToType({ enum: ['EUR', 'USD', 1, null] })).toBe('"EUR" | "USD" | 1 | null');
    expect(schemaToType({ const: true })).toBe('true');
    expect(schemaToType({ anyOf: [{ type: 'string' }, { type: 'number' }] })).toBe('string | number');
    expect(schemaToType({ allOf: [{ type: 'string' }, { enum: ['a'] }] })).toBe('string & "a"');
    expect(schemaToType({ type: 'array', items: { type: 'string' } })).toBe('string[]');
    expect(schemaToType({ type: 'array', prefixItems: [{ type: 'string' }], items: false })).toBe('[string?]');
    expect(
      schemaToType({ type: 'array', items: { type: ['object', 'null'], properties: { 'a|b': { const: 'x & y' } } } }),
    ).toBe('({\n  "a|b"?: "x & y";\n  [key: string]: unknown;\n} | null)[]');
    expect(schemaToType(true)).toBe('unknown');
    expect(schemaToType(false)).toBe('never');
    // What TypeScript cannot say leaves the type as wide as without it.
    expect(schemaToType({ description: 'anything', not: { type: 'string' } })).toBe('unknown');
  });

  it('makes objects closed only when the schema closes them, members optional unless required', () => {
    expect(schemaToType({ type: 'object', properties: { a: { type: 'number' }, b: {} }, required: ['a', 'c'] })).toBe(
      '{\n  a: number;\n  b?: unknown;\n  c: unknown;\n  [key: string]: unknown;\n}',
    );
    expect(schemaToType({ type: 'object', properties: { a: { type: 'number' } }, additionalProperties: false })).toBe(
      '{\n  a?: number;\n}',
    );
  });

  it('follows $ref into the schema itself', () => {
    const schema = {
      type: 'object',
      properties: { x: { $ref: '#/$defs/amount' } },
      $defs: { amount: { type: 'number' } },
    };
    expect(schemaToType(schema)).toBe('{\n  x?: number;\n  [key: string]: unknown;\n}');
    // A pointer at nothing (the service refuses it) is anything, not an error here.
    expect(schemaToType({ $ref: '#/nowhere' })).toBe('unknown');
  });

  it('types each member of the event within what the wire allows', () => {
    const schema = {
      type: 'object',
      properties: {
        actor: { type: 'string', format: 'email' },
        context: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
      },
      allOf: [{ properties: { resource: { type: 'string' } } }],
    };
    expect(memberType(schema, 'actor', ['string'])).toBe('string');
    expect(memberType(schema, 'resource', ['string', 'null'])).toBe('string');
    expect(memberType(schema, 'context', ['object', 'null'])).toBe(
      '{\n  amount: number;\n  [key: string]: unknown;\n}',
    );
    // No word about a member: what the wire allows.
    expect(memberType({ type: 'object' }, 'context', ['object', 'null'])).toBe('{ [key: string]: unknown } | null');
    // A member that can never match (context is never a string): never, so every such event is refused.
    expect(memberType({ properties: { context: { type: 'string' } } }, 'context', ['object', 'null'])).toBe('never');
  });

  it('keeps an account’s text out of the code: names are string literals, descriptions escaped comments', () => {
    const hostile = '*/ declare const pwned: 1; /*';
    const type = schemaToType({ type: 'object', properties: { [hostile]: { type: 'string', description: hostile } } });
    expect(type).toBe(
      `{\n  /** *\\/ declare const pwned: 1; /* */\n  ${JSON.stringify(hostile)}?: string;\n  [key: string]: unknown;\n}`,
    );
    expect(docComment('one\r\ntwo\u2028three', '')).toBe('/**\n * one\n * two\n * three\n */');
  });

  it('writes every live pattern into ActionSchemas, leaving deleted ones out', () => {
    const at = new Date('2026-12-07T22:00:00.000Z');
    const made = { createdAt: at.toISOString(), keyId: 'key_01KAR2Y6T0F5M3Q8W9Z1B4C7D2' };
    const text = declarationsFor(
      [
        { ...made, action: 'invoice.*', version: 2, mode: 'enforce', schema: { required: ['context'] } },
        { ...made, action: 'doc.read', version: 1, mode: 'warn', schema: { type: 'object' } },
        { ...made, action: 'gone', version: 3, mode: 'enforce', schema: null },
      ],
      { accountId: 'acc_01KAR2Y6T0F5M3Q8W9Z1B4C7D2', baseUrl: 'https://audit.example', at },
    );
    expect(text).toContain('"invoice.*": {\n    mode: "enforce";\n    version: 2;\n    actor: string;');
    expect(text).toContain('"doc.read": {\n    mode: "warn";');
    expect(text).not.toContain('"gone"');
    expect(text).toContain(
      "declare module '@audit-trail/client' {\n  interface ActionSchemas extends AuditTrailActionSchemas {}\n}",
    );
  });

  it('writes nothing from an answer whose code-written members are not what the service sends', () => {
    const made = { createdAt: '2026-12-07T22:00:00.000Z', keyId: 'key_01KAR2Y6T0F5M3Q8W9Z1B4C7D2' };
    const source = { accountId: 'acc_01KAR2Y6T0F5M3Q8W9Z1B4C7D2', baseUrl: 'https://audit.example', at: new Date() };
    const good = { ...made, action: 'a.b', version: 1, mode: 'enforce' as const, schema: { type: 'object' } };
    const hostile = [
      { ...good, version: '1; import("evil")' },
      { ...good, version: 1.5 },
      { ...good, version: 0 },
      { ...good, mode: 'enforce"; x: 1; "' },
    ] as unknown as (typeof good)[];
    for (const answer of hostile) expect(() => declarationsFor([answer], source)).toThrow(/version|mode/);
    const header = declarationsFor([], { ...source, accountId: 'acc_x\nimport "evil";\u2028y' }).split('\n')[0];
    expect(header).toBe(
      '// Generated by `audit-trail-client types` from the action schemas of account acc_x import "evil"; y',
    );
  });
});
