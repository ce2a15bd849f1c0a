import { DataSource, EntityMetadata, QueryRunner } from 'typeorm';
import { INDEX_STORAGE } from './entities/index-storage';
import { functionDrift } from './function-drift';
import { DECLARED_FUNCTIONS, DECLARED_TRIGGERS, DeclaredFunction, DeclaredTrigger } from './schema/functions';
import { asBoolean, asString, computed, selectRows } from './schema/table';

/** The catalog's answers, by name: none of them is a table of an entity. */
const PRESENT = computed({ present: ['to_regclass($1) IS NOT NULL', asBoolean] });
const QUOTED = computed({ name: ['name', asString], quoted: ['quote_ident(name)', asString] });
const DEFINITION = computed({ definition: ['pg_get_constraintdef(oid)', asString] });
/** An index's storage parameters as a definition's tail: ` WITH (fillfactor=100)`, or nothing. */
const WITH = (index: string): string =>
  `coalesce(' WITH (' || array_to_string((SELECT reloptions FROM pg_class WHERE oid = ${index}), ', ') || ')', '')`;
const CONSTRAINT = computed({
  name: ['c.conname', asString],
  definition: [
    `pg_get_constraintdef(c.oid) || CASE WHEN c.contype IN ('p', 'u') THEN ${WITH('c.conindid')} ELSE '' END`,
    asString,
  ],
});

/**
 * How the entities differ from the database they are connected to: the statements TypeORM's
 * schema builder would run to make the database match them, then a line for every named primary
 * key, unique, index, foreign key or check whose definition differs. Empty when the entities
 * describe the schema exactly, which `npm run migration:check` requires after the migrations.
 *
 * The second part exists because the schema builder matches indexes, uniques, checks and foreign
 * keys by name only (indexes also by their set of columns): it would not notice a check whose
 * expression differs, columns in another order, another primary key name, or a foreign key on
 * other columns. Both sides are compared as PostgreSQL prints them (pg_get_constraintdef), an
 * entity's check after PostgreSQL has parsed it on a scratch copy of its table.
 *
 * Last, every function and trigger against its declared current text (libs/database/src/schema/functions,
 * compared by function-drift.ts): a line names each one that differs, is missing or is not declared.
 */
export async function schemaDrift(
  dataSource: DataSource,
  declared: { functions: readonly DeclaredFunction[]; triggers: readonly DeclaredTrigger[] } = {
    functions: DECLARED_FUNCTIONS,
    triggers: DECLARED_TRIGGERS,
  },
): Promise<string[]> {
  const { upQueries } = await dataSource.driver.createSchemaBuilder().log();
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.startTransaction();
    const lines: string[] = upQueries.map((query) => `${query.query};`);
    for (const metadata of dataSource.entityMetadatas) {
      const [exists] = await selectRows(runner.manager, PRESENT, `SELECT ${PRESENT.sql}`, [metadata.tablePath]);
      if (!exists?.present) continue; // the schema builder already said CREATE TABLE
      const declared = await declaredConstraints(runner, metadata);
      const actual = await databaseConstraints(runner, metadata.tablePath);
      for (const [name, definition] of declared) {
        const found = actual.get(name);
        if (found === definition) continue;
        lines.push(
          found === undefined
            ? `-- ${metadata.tableName}: the entity declares ${name} ${definition}, the database has no such constraint or index`
            : `-- ${metadata.tableName}: the entity declares ${name} ${definition}, the database has ${found}`,
        );
      }
      for (const [name, definition] of actual) {
        if (!declared.has(name))
          lines.push(
            `-- ${metadata.tableName}: the database has ${name} ${definition}, the entity does not declare it`,
          );
      }
    }
    lines.push(...(await functionDrift(runner, declared.functions, declared.triggers)));
    return lines;
  } finally {
    if (runner.isTransactionActive) await runner.rollbackTransaction();
    await runner.release();
  }
}

/**
 * Indexes an entity declares with `synchronize: false` because TypeORM cannot say what they are (an
 * access method or operator class): their definition as PostgreSQL prints it, so drift is still caught.
 */
const UNSYNCHRONIZED_INDEXES: Record<string, string> = {
  ix_events_context: 'INDEX USING gin (context jsonb_path_ops)',
};

/** An entity's named constraints and indexes, each printed the way `databaseConstraints` prints the real ones. */
async function declaredConstraints(runner: QueryRunner, metadata: EntityMetadata): Promise<Map<string, string>> {
  // Quoted as PostgreSQL quotes them (keywords such as "position" too).
  const names = [metadata.tablePath, ...metadata.columns.map((c) => c.databaseName)];
  for (const key of metadata.foreignKeys) names.push(key.referencedTablePath, ...key.referencedColumnNames);
  const quoted = new Map(
    (await selectRows(runner.manager, QUOTED, `SELECT ${QUOTED.sql} FROM unnest($1::text[]) name`, [names])).map(
      (row) => [row.name, row.quoted],
    ),
  );
  const quote = (name: string): string => quoted.get(name) ?? name;
  const list = (columns: string[]): string => columns.map(quote).join(', ');
  const declared = new Map<string, string>();
  const set = (name: string, definition: string): void => {
    const storage = INDEX_STORAGE[name];
    declared.set(name, storage === undefined ? definition : `${definition} WITH (${storage})`);
  };
  const primary = metadata.primaryColumns;
  if (primary.length > 0) {
    const name = primary[0]!.primaryKeyConstraintName ?? '(unnamed primary key)';
    set(name, `PRIMARY KEY (${list(primary.map((c) => c.databaseName))})`);
  }
  for (const unique of metadata.uniques) {
    set(unique.name, `UNIQUE (${list(unique.columns.map((c) => c.databaseName))})`);
  }
  for (const index of metadata.indices) {
    set(
      index.name,
      UNSYNCHRONIZED_INDEXES[index.name] ??
        `${index.isUnique ? 'UNIQUE ' : ''}INDEX (${list(index.columns.map((c) => c.databaseName))})`,
    );
  }
  for (const key of metadata.foreignKeys) {
    declared.set(
      key.name,
      `FOREIGN KEY (${list(key.columnNames)}) REFERENCES ${quote(key.referencedTablePath)}(${list(key.referencedColumnNames)})` +
        (key.onDelete && key.onDelete !== 'NO ACTION' ? ` ON DELETE ${key.onDelete}` : '') +
        (key.onUpdate && key.onUpdate !== 'NO ACTION' ? ` ON UPDATE ${key.onUpdate}` : ''),
    );
  }
  for (const check of metadata.checks)
    declared.set(check.name, await parsedCheck(runner, quote(metadata.tablePath), check.expression));
  return declared;
}

/** A check expression as PostgreSQL prints it, parsed on an empty temporary copy of the table (rolled back). */
async function parsedCheck(runner: QueryRunner, table: string, expression: string): Promise<string> {
  await runner.query(`SAVEPOINT drift_check`);
  try {
    await runner.query(`CREATE TEMPORARY TABLE drift_check_probe (LIKE ${table})`);
    await runner.query(`ALTER TABLE drift_check_probe ADD CONSTRAINT probe CHECK (${expression})`);
    const [row] = await selectRows(
      runner.manager,
      DEFINITION,
      `SELECT ${DEFINITION.sql} FROM pg_constraint WHERE conrelid = 'drift_check_probe'::regclass AND conname = 'probe'`,
    );
    return row!.definition;
  } catch (error) {
    return `CHECK (${expression}), which PostgreSQL refuses: ${(error as Error).message}`;
  } finally {
    await runner.query(`ROLLBACK TO SAVEPOINT drift_check`);
  }
}

/**
 * The table's primary key, uniques, foreign keys and checks (pg_get_constraintdef) and the indexes
 * that back none of them (an index of another access method than btree as pg_get_indexdef prints it), each
 * index's storage parameters after it (` WITH (fillfactor=100)`). Nullability (PostgreSQL 18 lists NOT NULL here too) is the schema builder's.
 */
async function databaseConstraints(runner: QueryRunner, table: string): Promise<Map<string, string>> {
  const rows = await selectRows(
    runner.manager,
    CONSTRAINT,
    `SELECT ${CONSTRAINT.sql}
       FROM pg_constraint c WHERE c.conrelid = $1::regclass AND c.contype IN ('p', 'u', 'f', 'c')
     UNION ALL
     SELECT i.relname,
            CASE WHEN am.amname <> 'btree' THEN regexp_replace(pg_get_indexdef(x.indexrelid), '^.* USING ', 'INDEX USING ')
                 ELSE CASE WHEN x.indisunique THEN 'UNIQUE ' ELSE '' END || 'INDEX (' ||
                      (SELECT string_agg(pg_get_indexdef(x.indexrelid, k, true), ', ' ORDER BY k)
                         FROM generate_series(1, x.indnkeyatts) k) || ')' || ${WITH('x.indexrelid')} END
       FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_am am ON am.oid = i.relam
      WHERE x.indrelid = $1::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)`,
    [table],
  );
  return new Map(rows.map((row) => [row.name, row.definition]));
}
