import { getMetadataArgsStorage, ValueTransformer } from 'typeorm';
// Relative, not @app/common: migration-check.ts loads this file without the path aliases.
import { uuidToUlid } from '../../../common/src/ids';
import { Db, queryPrepared } from '../transaction-runner';

/** The names of an entity's properties that hold data (not methods). */
export type Property<E> = {
  [K in keyof E]-?: E[K] extends (...args: never[]) => unknown ? never : K;
}[keyof E] &
  string;

/** A list of columns to read and how each row of the result becomes a typed object. */
export interface Selection<Row> {
  /** `a.id AS "id", a.created_at AS "createdAt"`: the SELECT list (or RETURNING list) of the query. */
  readonly sql: string;
  /** One row as pg returns it (keyed by the aliases above) to `Row`, through each column's transformer. */
  readonly decode: (raw: Record<string, unknown>) => Row;
}

interface ColumnInfo {
  name: string;
  transformer: ValueTransformer | undefined;
}

/**
 * One table as its entity class describes it: the SQL that reads its columns is written from
 * TypeORM's metadata (the `@Column` decorators), and typed by the entity's properties. A query
 * names columns by property (`accounts.column('retentionDays')`), so renaming a property fails
 * `npm run typecheck` in every query that reads it, and renaming a column (`@Column({ name })`)
 * changes every query with it. The rows of `selectRows` are `Pick<Entity, …>`, decoded with the
 * column's own transformer (int8 to number, …): no hand-written row interface, no cast at the call.
 */
export class Table<E> {
  private readonly columns = new Map<string, ColumnInfo>();

  constructor(
    entity: new () => E,
    /** The alias queries give the table: `FROM accounts a`. */
    readonly alias: string,
  ) {
    const storage = getMetadataArgsStorage();
    const table = storage.tables.find((t) => t.target === entity);
    if (!table?.name) throw new Error(`${entity.name} is not an @Entity with a name`);
    this.name = table.name;
    for (const column of storage.filterColumns(entity)) {
      const transformer = column.options.transformer;
      if (Array.isArray(transformer)) throw new Error(`${entity.name}.${column.propertyName}: one transformer at most`);
      this.columns.set(column.propertyName, {
        name: column.options.name ?? column.propertyName,
        transformer,
      });
    }
  }

  /** The table's name in SQL. */
  readonly name: string;

  /** `a.retention_days`: the column of `property`, qualified by the alias. */
  column(property: Property<E>): string {
    return `${this.alias}.${quoted(this.info(property).name)}`;
  }

  /** `retention_days`: the bare column (for an INSERT's column list or an UPDATE's SET). */
  bare(property: Property<E>): string {
    return quoted(this.info(property).name);
  }

  /** Reads `properties` as a `Pick<E, …>` row. */
  select<K extends Property<E>>(...properties: K[]): Selection<Pick<E, K>> {
    return this.selectAs(Object.fromEntries(properties.map((p) => [p, p])) as { [P in K]: P });
  }

  /**
   * Reads columns under names of the query's choosing: `chains.selectAs({ chainName: 'name' })` is a
   * row `{ chainName: ChainEntity['name'] }` (a joined table's column beside the main one's).
   */
  selectAs<const M extends Record<string, Property<E>>>(names: M): Selection<{ [N in keyof M]: E[M[N]] }> {
    const infos = Object.entries(names).map(([name, property]) => [name, this.info(property)] as const);
    return {
      sql: infos.map(([name, info]) => `${this.alias}.${quoted(info.name)} AS "${name}"`).join(', '),
      decode: (raw) => {
        const row: Record<string, unknown> = {};
        for (const [name, info] of infos) {
          const value = raw[name];
          row[name] = info.transformer && value !== null && value !== undefined ? info.transformer.from(value) : value;
        }
        return row as { [N in keyof M]: E[M[N]] };
      },
    };
  }

  private info(property: string): ColumnInfo {
    const info = this.columns.get(property);
    if (!info) throw new Error(`${this.name} has no column for the property ${property}`);
    return info;
  }
}

/** How a computed value (not a column: `count(*)`, `pg_current_snapshot()::text`) is read from pg's answer. */
export type Decoder<T> = (raw: unknown) => T;

/** pg's int8 and numeric arrive as text: a number (counts, positions, all far below 2^53). */
export const asNumber: Decoder<number> = (raw) => {
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw) : NaN;
  if (!Number.isFinite(value)) throw new Error(`expected a number from the database, got ${typeof raw}`);
  return value;
};
export const asString: Decoder<string> = (raw) => {
  if (typeof raw !== 'string') throw new Error(`expected text from the database, got ${typeof raw}`);
  return raw;
};
export const asBoolean: Decoder<boolean> = (raw) => {
  if (typeof raw !== 'boolean') throw new Error(`expected a boolean from the database, got ${typeof raw}`);
  return raw;
};
export const asDate: Decoder<Date> = (raw) => {
  if (!(raw instanceof Date)) throw new Error(`expected a timestamp from the database, got ${typeof raw}`);
  return raw;
};
/**
 * A stored id (a uuid: migration 1765900000000) as the API writes it, `prefix_` and
 * the ULID: for ids read under a computed name (a column read through a Table decodes itself).
 */
export function asId(prefix: string): Decoder<string> {
  return (raw) => uuidToUlid(prefix, asString(raw));
}
/** bytea (pg gives a Buffer). */
export const asBuffer: Decoder<Buffer> = (raw) => {
  if (!Buffer.isBuffer(raw)) throw new Error(`expected bytea from the database, got ${typeof raw}`);
  return raw;
};
/** An array (`array_agg(…)`, an int4[] or float8[] column), each element through `decoder`. */
export function arrayOf<T>(decoder: Decoder<T>): Decoder<T[]> {
  return (raw) => {
    if (!Array.isArray(raw)) throw new Error(`expected an array from the database, got ${typeof raw}`);
    return raw.map((element: unknown) => decoder(element));
  };
}
/** `decoder`, or null where the value is null. */
export function orNull<T>(decoder: Decoder<T>): Decoder<T | null> {
  return (raw) => (raw === null || raw === undefined ? null : decoder(raw));
}

/** Computed values by name: `computed({ total: ['count(*)', asNumber] })` reads `count(*) AS "total"` as a number. */
export function computed<const R extends Record<string, unknown>>(values: {
  [N in keyof R]: readonly [sql: string, decode: Decoder<R[N]>];
}): Selection<R> {
  const entries = Object.entries(values) as [string, readonly [string, Decoder<unknown>]][];
  return {
    sql: entries.map(([name, [sql]]) => `${sql} AS "${name}"`).join(', '),
    decode: (raw) => Object.fromEntries(entries.map(([name, [, decode]]) => [name, decode(raw[name])])) as R,
  };
}

/** One row read from several selections (a table's columns, a joined table's, computed values). */
export function joined<A, B>(a: Selection<A>, b: Selection<B>): Selection<A & B>;
export function joined<A, B, C>(a: Selection<A>, b: Selection<B>, c: Selection<C>): Selection<A & B & C>;
export function joined(...parts: Selection<object>[]): Selection<object> {
  return {
    sql: parts.map((part) => part.sql).join(', '),
    decode: (raw) => Object.assign({}, ...parts.map((part) => part.decode(raw))) as object,
  };
}

/** A column name as SQL reads it: quoted only where it must be (a reserved word such as "timestamp"). */
function quoted(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) && !RESERVED.has(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

/**
 * Column names quoted as this schema's SQL always has: `"timestamp"` (a type's name), `"index"`
 * (merkle_nodes'; a keyword, though not a reserved one), and the reserved words.
 */
const RESERVED = new Set(['timestamp', 'index', 'order', 'user', 'default', 'check', 'primary']);

/**
 * Runs a query whose SELECT list is `selection.sql` and gives its rows decoded: the one place a
 * result of `db.query`, which TypeORM types as `any`, becomes a typed row. An UPDATE or DELETE reads
 * its RETURNING rows through a CTE (`WITH u AS (UPDATE … RETURNING …) SELECT … FROM u`): TypeORM answers
 * those statements themselves with `[rows, count]`, which this refuses.
 */
export async function selectRows<Row>(
  db: Db,
  selection: Selection<Row>,
  text: string,
  values: unknown[] = [],
): Promise<Row[]> {
  const raw: unknown = await db.query(text, values);
  if (!Array.isArray(raw) || raw.some((row) => typeof row !== 'object' || row === null || Array.isArray(row)))
    throw new Error('selectRows: not the rows of a SELECT (an UPDATE or DELETE reads its RETURNING through a CTE)');
  return raw.map((row: Record<string, unknown>) => selection.decode(row));
}

/** selectRows as a named prepared statement (queryPrepared): for hot statements whose text is a constant. */
export async function selectPrepared<Row>(
  db: Db,
  selection: Selection<Row>,
  text: string,
  values: unknown[],
): Promise<Row[]> {
  const raw = await queryPrepared<Record<string, unknown>>(db, text, values);
  return raw.map((row) => selection.decode(row));
}
