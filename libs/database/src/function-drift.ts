import { QueryRunner } from 'typeorm';
import { DeclaredFunction, DeclaredTrigger } from './schema/functions';
import { asBoolean, asString, computed, orNull, selectRows } from './schema/table';

/** Where the declared functions are created to be printed by PostgreSQL: inside the check's transaction, rolled back. */
const SCRATCH = 'drift_check_functions';

const FUNCTION = computed({
  signature: [`p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')'`, asString],
  definition: ['pg_get_functiondef(p.oid)', asString],
  executableByPublic: [
    `p.proacl IS NULL OR EXISTS (SELECT 1 FROM aclexplode(p.proacl) a WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE')`,
    asBoolean,
  ],
  securityDefiner: ['p.prosecdef', asBoolean],
  searchPath: [`(SELECT substr(c, 13) FROM unnest(p.proconfig) c WHERE c LIKE 'search_path=%')`, orNull(asString)],
});
/** The functions of a schema, but those an extension installed. */
const FUNCTIONS_OF = `SELECT ${FUNCTION.sql} FROM pg_proc p
  WHERE p.pronamespace = $1::regnamespace AND p.prokind = 'f'
    AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e')`;

const TRIGGER = computed({
  table: ['c.relname', asString],
  name: ['t.tgname', asString],
  definition: ['pg_get_triggerdef(t.oid)', asString],
  firing: [
    `CASE t.tgenabled WHEN 'O' THEN 'origin' WHEN 'A' THEN 'always' WHEN 'R' THEN 'replica' ELSE 'disabled' END`,
    asString,
  ],
});

/**
 * Why a function's own search_path is unsafe, or null: one that does not end with pg_temp searches temp
 * tables first (PostgreSQL puts pg_temp first when it is not named), so a role with TEMP shadows the
 * tables it reads (attack finding 7); a SECURITY DEFINER one without a search_path takes the caller's.
 */
export function unsafeSearchPath(fn: { securityDefiner: boolean; searchPath: string | null }): string | null {
  if (fn.searchPath === null)
    return fn.securityDefiner ? 'SECURITY DEFINER without its own search_path (it runs on the caller’s)' : null;
  const schemas = fn.searchPath.split(',').map((s) => s.trim().replace(/^"(.*)"$/, '$1'));
  return schemas[schemas.length - 1] === 'pg_temp'
    ? null
    : `search_path ${fn.searchPath} does not end with pg_temp (temp tables would be searched first)`;
}

/** White space folded: a text re-indented in the declaration is the same function. */
const folded = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** Where two folded texts first differ, a little of each around it. */
function firstDifference(database: string, declared: string): string {
  let at = 0;
  while (at < database.length && database[at] === declared[at]) at++;
  const around = (text: string) => JSON.stringify(text.slice(Math.max(0, at - 30), at + 50));
  return `at character ${at}: the database has …${around(database)}…, the declaration …${around(declared)}…`;
}

/**
 * How the functions and triggers of the public schema differ from the declared ones
 * (libs/database/src/schema/functions): a function is compared as pg_get_functiondef prints it, the
 * declared text having been created in a scratch schema (so PostgreSQL prints both alike: types,
 * options, quoting), with white space folded; and whether PUBLIC may execute it. A trigger is compared
 * as pg_get_triggerdef prints it, and how it fires (a trigger disabled, or no longer `always`, differs).
 * A function or trigger of the database that is not declared, or declared and missing, is a line too.
 * Runs inside the caller's transaction and leaves nothing behind.
 */
export async function functionDrift(
  runner: QueryRunner,
  declaredFunctions: readonly DeclaredFunction[],
  declaredTriggers: readonly DeclaredTrigger[],
): Promise<string[]> {
  const lines: string[] = [];
  await runner.query(`SAVEPOINT function_drift`);
  try {
    // Printed with public on the search path and nothing else: the same names qualified the same way.
    await runner.query(`SET LOCAL search_path TO public`);
    const actual = new Map(
      (await selectRows(runner.manager, FUNCTION, FUNCTIONS_OF, ['public'])).map((row) => [row.signature, row]),
    );
    const triggers = await selectRows(
      runner.manager,
      TRIGGER,
      `SELECT ${TRIGGER.sql} FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
        WHERE NOT t.tgisinternal AND c.relnamespace = 'public'::regnamespace`,
    );
    const declared = await printed(runner, declaredFunctions, lines);

    for (const [signature, fn] of declared) {
      const found = actual.get(signature);
      if (!found) {
        lines.push(`-- function ${signature}: declared, the database has no such function`);
        continue;
      }
      if (folded(found.definition) !== folded(fn.definition))
        lines.push(
          `-- function ${signature}: differs from its declaration ${firstDifference(folded(found.definition), folded(fn.definition))}`,
        );
      if (found.executableByPublic !== fn.executableByPublic)
        lines.push(
          `-- function ${signature}: PUBLIC ${found.executableByPublic ? 'may' : 'may not'} execute it, the declaration says it ${fn.executableByPublic ? 'may' : 'may not'}`,
        );
    }
    for (const [signature, fn] of actual) {
      const unsafe = unsafeSearchPath(fn);
      if (unsafe) lines.push(`-- function ${signature}: ${unsafe}`);
    }
    for (const signature of actual.keys())
      if (!declared.has(signature)) lines.push(`-- function ${signature}: the database has it, nothing declares it`);

    const byKey = new Map(triggers.map((t) => [`${t.name} on ${t.table}`, t]));
    const declaredKeys = new Set<string>();
    for (const trigger of declaredTriggers) {
      const key = `${trigger.name} on ${trigger.table}`;
      declaredKeys.add(key);
      const found = byKey.get(key);
      if (!found) lines.push(`-- trigger ${key}: declared, the database has no such trigger`);
      else {
        if (folded(found.definition) !== folded(trigger.sql))
          lines.push(`-- trigger ${key}: the database has ${found.definition}, the declaration ${trigger.sql}`);
        if (found.firing !== trigger.firing)
          lines.push(`-- trigger ${key}: fires ${found.firing}, the declaration says ${trigger.firing}`);
      }
    }
    for (const key of byKey.keys())
      if (!declaredKeys.has(key)) lines.push(`-- trigger ${key}: the database has it, nothing declares it`);
  } finally {
    await runner.query(`ROLLBACK TO SAVEPOINT function_drift`);
  }
  return lines;
}

/**
 * The declared functions as PostgreSQL prints them, by signature: each created in the scratch schema
 * (bodies unchecked: they name tables of public), printed, the schema's name put back to public. A
 * declaration PostgreSQL refuses, or one that makes no new function, is a line of `lines`.
 */
async function printed(
  runner: QueryRunner,
  declared: readonly DeclaredFunction[],
  lines: string[],
): Promise<Map<string, { definition: string; executableByPublic: boolean }>> {
  await runner.query(`CREATE SCHEMA ${SCRATCH}`);
  await runner.query(`SET LOCAL check_function_bodies = off`);
  const result = new Map<string, { definition: string; executableByPublic: boolean }>();
  for (const fn of declared) {
    let made;
    await runner.query(`SAVEPOINT declared_function`);
    try {
      await runner.query(`SET LOCAL search_path TO ${SCRATCH}`);
      await runner.query(fn.sql);
      await runner.query(`SET LOCAL search_path TO public`);
      made = (await selectRows(runner.manager, FUNCTION, FUNCTIONS_OF, [SCRATCH])).filter(
        (row) => !result.has(row.signature),
      );
      await runner.query(`RELEASE SAVEPOINT declared_function`);
    } catch (error) {
      await runner.query(`ROLLBACK TO SAVEPOINT declared_function`);
      lines.push(`-- a declaration PostgreSQL refuses (${(error as Error).message}): ${folded(fn.sql).slice(0, 100)}…`);
      continue;
    }
    if (made.length !== 1) {
      lines.push(`-- a declaration another one already makes (the same signature): ${folded(fn.sql).slice(0, 100)}…`);
      continue;
    }
    result.set(made[0]!.signature, {
      definition: made[0]!.definition.replace(`FUNCTION ${SCRATCH}.`, 'FUNCTION public.'),
      executableByPublic: fn.executableByPublic,
    });
  }
  await runner.query(`SET LOCAL search_path TO public`);
  return result;
}
