import { diffLines, diffSummary, formatSchema, parseSchema, previewSentence, stateOf } from './schema-text';

describe('the Schemas page in words (contract §19)', () => {
  it('shows a schema as indented JSON text, and a deletion in words', () => {
    expect(formatSchema({ type: 'object', required: ['context'] })).toBe(
      '{\n  "type": "object",\n  "required": [\n    "context"\n  ]\n}',
    );
    // Hostile text stays text: the page puts it in a <pre> as a string, escaped by Preact.
    expect(formatSchema({ description: '<img src=x onerror=alert(1)>' })).toBe(
      '{\n  "description": "<img src=x onerror=alert(1)>"\n}',
    );
    expect(formatSchema(null)).toBe('(deleted: no schema)');
    expect(stateOf({ mode: 'enforce', schema: null })).toBe('deleted');
    expect(stateOf({ mode: 'enforce', schema: {} })).toBe('enforce');
  });

  it('takes a JSON object and says why anything else is not one', () => {
    expect(parseSchema(' {"type":"object"} ')).toEqual({ schema: { type: 'object' } });
    const problem = (text: string) => {
      const parsed = parseSchema(text);
      return 'problem' in parsed ? parsed.problem : 'taken';
    };
    expect(problem('')).toMatch(/^Write the schema first/);
    expect(problem('{"type":')).toMatch(/^The schema is not JSON: /);
    for (const text of ['[]', '"object"', 'null', '42']) expect(problem(text)).toMatch(/must be a JSON object/);
  });

  it('says what a preview found', () => {
    expect(previewSentence('invoice.approve', { checked: 10, rejected: 3 })).toBe(
      'This version would reject 3 of the last 10 events of invoice.approve.',
    );
    expect(previewSentence('invoice.*', { checked: 1, rejected: 0 })).toBe(
      'This version would reject 0 of the last event of invoice.*.',
    );
    expect(previewSentence('doc.read', { checked: 0, rejected: 0 })).toBe(
      'No event of doc.read yet: this version rejects none so far.',
    );
  });

  it('marks the lines one version removes and the other adds, each line once and in order', () => {
    const left = ['{', '  "a": 1,', '  "b": 2,', '  "c": 3', '}'];
    const right = ['{', '  "a": 1,', '  "b": 20,', '  "c": 3,', '  "d": 4', '}'];
    const diff = diffLines(left, right);
    expect(diff).toEqual([
      { kind: 'same', text: '{' },
      { kind: 'same', text: '  "a": 1,' },
      { kind: 'removed', text: '  "b": 2,' },
      { kind: 'removed', text: '  "c": 3' },
      { kind: 'added', text: '  "b": 20,' },
      { kind: 'added', text: '  "c": 3,' },
      { kind: 'added', text: '  "d": 4' },
      { kind: 'same', text: '}' },
    ]);
    // Each side is whole again from its own lines.
    expect(diff.filter((l) => l.kind !== 'added').map((l) => l.text)).toEqual(left);
    expect(diff.filter((l) => l.kind !== 'removed').map((l) => l.text)).toEqual(right);
    expect(diffSummary(diff)).toBe('2 lines removed (marked −), 3 lines added (marked +).');
  });

  it('keeps a common line found between changes (a longest common subsequence)', () => {
    const diff = diffLines(['x', 'keep', 'y'], ['keep', 'z']);
    expect(diff).toEqual([
      { kind: 'removed', text: 'x' },
      { kind: 'same', text: 'keep' },
      { kind: 'removed', text: 'y' },
      { kind: 'added', text: 'z' },
    ]);
    expect(diffSummary(diffLines(['a'], ['a']))).toBe('The two versions’ schemas are the same.');
    expect(diffLines([], ['a'])).toEqual([{ kind: 'added', text: 'a' }]);
    expect(diffSummary(diffLines(['a'], []))).toBe('1 line removed (marked −), 0 lines added (marked +).');
  });

  it('stays bounded on large schemas: past the limit the middle is removed then added, still whole', () => {
    const left = Array.from({ length: 2500 }, (_, i) => `l${i}`);
    const right = Array.from({ length: 2500 }, (_, i) => `r${i}`);
    const started = Date.now();
    const diff = diffLines(['{', ...left, '}'], ['{', ...right, '}']);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(diff.filter((l) => l.kind === 'removed')).toHaveLength(2500);
    expect(diff.filter((l) => l.kind === 'added')).toHaveLength(2500);
    expect(diff[0]).toEqual({ kind: 'same', text: '{' });
    expect(diff[diff.length - 1]).toEqual({ kind: 'same', text: '}' });
  });
});
