import { withWrite } from './sql-query';

describe('withWrite', () => {
  it('runs the write as a CTE of the main statement, its parameters first and the main ones renumbered after', () => {
    const write = { text: 'INSERT INTO t SELECT * FROM unnest($1::int[], $2::text[])', values: [[1], ['a']] };
    const main = {
      text: 'UPDATE u SET a = $1, b = $2, c = $10, d = $11 WHERE id = $1',
      values: [10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110],
    };
    expect(withWrite(write, main)).toEqual({
      text:
        'WITH written AS (INSERT INTO t SELECT * FROM unnest($1::int[], $2::text[]))\n' +
        'UPDATE u SET a = $3, b = $4, c = $12, d = $13 WHERE id = $3',
      values: [[1], ['a'], ...main.values],
    });
  });

  it('refuses a main statement with a WITH of its own', () => {
    expect(() =>
      withWrite({ text: 'DELETE FROM t', values: [] }, { text: ' with x AS (SELECT 1) SELECT 1', values: [] }),
    ).toThrow(/WITH of its own/);
  });
});
