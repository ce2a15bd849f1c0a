import { AppError } from '../errors';
import { parseIJson } from './i-json';
import { like } from '../testing/like.fixture';

const fieldsOf = (text: string, maxDepth = 64, maxValues = Infinity): unknown => {
  try {
    parseIJson(text, maxDepth, maxValues);
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    return (e as AppError).details.fields;
  }
  throw new Error('accepted');
};

describe('parseIJson', () => {
  it('returns what JSON.parse returns, member names as sent', () => {
    const text = '{"constructor":{"prototype":1},"a":[{"toString":null},{"toString":2}],"s":"\\u00e9"}';
    expect(parseIJson(text, 64)).toEqual(JSON.parse(text));
  });

  it.each([
    ['{"a":1,"a":2}', 'a'],
    ['{"a":{"b":[{"c":1},{"c":1,"c":2}]}}', 'a.b[1].c'],
    ['{"k":1,"\\u006b":2}', 'k'],
    ['[{"x":[1,2,{"y":0,"y":0}]}]', '[0].x[2].y'],
  ])('refuses duplicate names in %s at %s', (text, field) => {
    expect(fieldsOf(text)).toEqual([{ field, message: like.stringContaining('duplicate member name') }]);
  });

  it('refuses __proto__ by its path', () => {
    expect(fieldsOf('{"a":[{"__proto__":1}]}')).toEqual([
      { field: 'a[0].__proto__', message: "keys named '__proto__' are not accepted" },
    ]);
  });

  it('counts depth in levels: maxDepth accepted, one more refused, 100,000 refused without recursing', () => {
    expect(parseIJson('[[[]]]', 3)).toEqual([[[]]]);
    expect(fieldsOf('[[[[]]]]', 3)).toEqual([
      { field: 'body', message: 'body is nested too deeply (a body may nest at most 3 levels)' },
    ]);
    expect(fieldsOf(`${'{"d":'.repeat(100000)}1${'}'.repeat(100000)}`)).toEqual([
      { field: 'd', message: 'd is nested too deeply (a body may nest at most 64 levels)' },
    ]);
  });

  it.each([
    ['an array in a member', `{"actor":${'['.repeat(1000)}${']'.repeat(1000)},"action":"b"}`, 'actor'],
    ['objects in a member', `{"context":${'{"d":'.repeat(100)}1${'}'.repeat(100)}}`, 'context'],
    [
      'a member of a list item',
      `{"events":[{"actor":"a"},{"actor":${'['.repeat(70)}${']'.repeat(70)}}]}`,
      'events[1].actor',
    ],
    ['a list of lists', `{"events":${'['.repeat(70)}${']'.repeat(70)}}`, 'events'],
  ])('names the member nested too deeply: %s', (_name, text, field) => {
    expect(fieldsOf(text)).toEqual([
      { field, message: `${field} is nested too deeply (a body may nest at most 64 levels)` },
    ]);
  });

  it.each(['{"a":', '{"a":1,}', '{a:1}', '// x\n{}', "{'a':1}", ''])('refuses invalid JSON %p', (text) => {
    expect(fieldsOf(text)).toEqual([{ field: 'body', message: 'body is not valid JSON' }]);
  });

  it('counts values (members and array items at any depth) before parsing: maxValues accepted, one more refused', () => {
    const text = '{"a":[1, 2, { } ,[ ]],"b":{"c":"x,y:[{"},"d":[ \n]}';
    expect(parseIJson(text, 64, 8)).toEqual(JSON.parse(text));
    expect(fieldsOf(text, 64, 7)).toEqual([
      { field: 'body', message: 'body holds more than 7 values (object members and array items)' },
    ]);
    expect(fieldsOf('[1,2,3', 64, 2)).toEqual([
      { field: 'body', message: 'body holds more than 2 values (object members and array items)' },
    ]);
    expect(fieldsOf('{"a":"unterminated', 64, 2)).toEqual([{ field: 'body', message: 'body is not valid JSON' }]);
  });

  it('accepts scalars (the pipe says a body must be an object)', () => {
    expect(parseIJson(' 42 ', 64)).toBe(42);
    expect(parseIJson('null', 64)).toBeNull();
  });

  describe('one check for every string (docs/contract.md §8)', () => {
    const NUL = 'must not contain the NUL character (\\u0000)';
    const LONE = 'must not contain lone UTF-16 surrogates';

    it.each([
      ['{"reason":"r\\u0000"}', 'reason', `reason ${NUL}`],
      ['{"reason":"r\\ud800"}', 'reason', `reason ${LONE}`],
      ['{"fields":["actor","context.\\uDC00"]}', 'fields[1]', `fields[1] ${LONE}`],
      ['{"events":[{},{},{},{"context":{"a":"\\ud83d"}}]}', 'events[3].context.a', `events[3].context.a ${LONE}`],
      ['"\\u0000"', 'body', `body ${NUL}`],
    ])('refuses %s naming %s', (text, field, message) => {
      expect(fieldsOf(text)).toEqual([{ field, message }]);
    });

    it('names a member whose name holds one, by its path', () => {
      expect(fieldsOf('{"context":{"k\\u0000":1,"l":[{"\\ud800":2}]}}')).toEqual([
        { field: 'context.k\u0000', message: `member names ${NUL}` },
        { field: 'context.l[0].\ud800', message: `member names ${LONE}` },
      ]);
    });

    it('names every member at fault, in body order, at most 100', () => {
      expect(fieldsOf('{"a":"\\u0000","b":{"c":["ok","\\udfff"]}}')).toEqual([
        { field: 'a', message: `a ${NUL}` },
        { field: 'b.c[1]', message: `b.c[1] ${LONE}` },
      ]);
      expect(fieldsOf(`[${Array(500).fill('"\\u0000"').join(',')}]`)).toHaveLength(100);
    });

    it('accepts pairs, escaped or not, and text that only looks like an escape', () => {
      const text = '{"e":"\\ud83d\\ude00 😀","k":"\\\\u0000 \\\\ud800","\\ud83d\\ude00":1}';
      expect(parseIJson(text, 64)).toEqual(JSON.parse(text));
    });
  });
});
