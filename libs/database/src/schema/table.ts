import { getMetadataArgsStorage, ValueTransformer } from 'typeorm';
import type { Db } from '../transaction-runner';

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
    const infos = properties.map((property) => [property, this.info(property)] as const);
    return {
      sql: infos.map(([property, info]) => `${this.alias}.${quoted(info.name)} AS "${property}"`).join(', '),
      decode: (raw) => {
        const row: Partial<Record<K, unknown>> = {};
        for (const [property, info] of infos) {
          const value = raw[property];
          row[property] =
            info.transformer && value !== null && value !== undefined ? info.transformer.from(value) : value;
        }
        return row as Pick<E, K>;
      },
    };
  }

  private info(property: string): ColumnInfo {
    const info = this.columns.get(property);
    if (!info) throw new Error(`${this.name} has no column for the property ${property}`);
    return info;
  }
}

/** A column name as SQL reads it: quoted only where it must be (a reserved word such as "timestamp"). */
function quoted(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) && !RESERVED.has(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

/** The column names of this schema that PostgreSQL reserves (or that read as a type). */
const RESERVED = new Set(['timestamp', 'index', 'position', 'level', 'day', 'size', 'start', 'user', 'order']);

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
