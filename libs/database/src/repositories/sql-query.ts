/** A statement and its parameters. */
export interface SqlQuery {
  text: string;
  values: unknown[];
}

/**
 * One statement that runs the data-modifying statement `write` (an INSERT, UPDATE or DELETE
 * without RETURNING) as a CTE of `main`: one round trip instead of two, which counts on a chain's
 * critical path, where every statement of an append transaction is waited for under its lock.
 * PostgreSQL runs both on one snapshot, so `main` must not need to see what `write` changes (nor
 * any trigger of `main`'s table), and `write` runs to completion even if `main` touches no row.
 * `main`'s parameters are renumbered after `write`'s; `main` must not begin with a WITH of its own.
 */
export function withWrite(write: SqlQuery, main: SqlQuery): SqlQuery {
  if (/^\s*WITH\b/i.test(main.text)) throw new Error('withWrite: the main statement has a WITH of its own');
  const shift = write.values.length;
  return {
    text: `WITH written AS (${write.text})\n${main.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + shift}`)}`,
    values: [...write.values, ...main.values],
  };
}
