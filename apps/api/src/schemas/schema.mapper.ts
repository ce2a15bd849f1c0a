import { ActionSchemaRow } from '@app/database';
import { SchemaVersionView, SchemaView, SchemaWithVersionsView } from './dto/schema.view';

/** The one place a stored schema version becomes its wire shape. */
export function toSchemaView(row: ActionSchemaRow): SchemaView {
  return {
    action: row.action,
    version: row.version,
    mode: row.mode,
    schema: row.schema,
    createdAt: row.createdAt.toISOString(),
    keyId: row.keyId,
  };
}

/** The latest of `versions` (oldest first) with the history of them all. */
export function toSchemaWithVersionsView(versions: readonly ActionSchemaRow[]): SchemaWithVersionsView {
  const latest = versions[versions.length - 1]!;
  return {
    ...toSchemaView(latest),
    versions: versions.map((v): SchemaVersionView => ({
      version: v.version,
      mode: v.mode,
      createdAt: v.createdAt.toISOString(),
      keyId: v.keyId,
    })),
  };
}
