/** A function of the database as it must be now: its whole `CREATE OR REPLACE FUNCTION` text. */
export interface DeclaredFunction {
  readonly sql: string;
  /** Whether PUBLIC may execute it (false: a migration revoked that; only the owner and roles granted it may). */
  readonly executableByPublic: boolean;
}

/** How a trigger fires: `origin` (as usual; not under session_replication_role = replica) or `always`. */
export type TriggerFiring = 'origin' | 'always';

/** A trigger of the database as it must be now: its definition as pg_get_triggerdef prints it, and how it fires. */
export interface DeclaredTrigger {
  readonly name: string;
  readonly table: string;
  readonly sql: string;
  readonly firing: TriggerFiring;
}

export function declareFunction(sql: string, options: { executableByPublic?: boolean } = {}): DeclaredFunction {
  return { sql: sql.trim(), executableByPublic: options.executableByPublic ?? true };
}

const TRIGGER = /^CREATE TRIGGER (\w+) .* ON public\.(\w+) /;

export function declareTrigger(sql: string, firing: TriggerFiring = 'origin'): DeclaredTrigger {
  const match = TRIGGER.exec(sql);
  if (!match) throw new Error(`not a trigger definition as pg_get_triggerdef prints one: ${sql}`);
  return { name: match[1]!, table: match[2]!, sql, firing };
}

/**
 * The statement triggers that refuse `operations` on `table` for every role (audit_reject_change),
 * named trg_<table>_reject_<operation>.
 */
export function refusals(
  table: string,
  operations: readonly ('UPDATE' | 'DELETE' | 'TRUNCATE')[],
  firing: TriggerFiring = 'origin',
): DeclaredTrigger[] {
  return operations.map((op) =>
    declareTrigger(
      `CREATE TRIGGER trg_${table}_reject_${op.toLowerCase()} BEFORE ${op} ON public.${table} FOR EACH STATEMENT EXECUTE FUNCTION audit_reject_change()`,
      firing,
    ),
  );
}
