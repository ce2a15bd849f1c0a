import type { NewEvent } from '../types';

/*
 * Events typed by an account's action schemas (docs/contract.md §19, §20). `audit-trail-client types`
 * writes a declaration file that fills ActionSchemas in (TypeScript module augmentation of
 * '@audit-trail/client'); from then on `recorder.record(event)` and `client.events.append(event)`
 * take, for an action whose applicable schema is enforced, only events whose actor, resource and
 * context have the schema's types: the team's compiler refuses what the service would. Without that
 * file ActionSchemas is empty and every event is free-form, as before.
 */

/** One action pattern's latest schema as the types command writes it: the members' TypeScript types. */
export interface ActionSchemaTypes {
  mode: 'warn' | 'enforce';
  version: number;
  actor: unknown;
  resource: unknown;
  context: unknown;
}

/**
 * The account's schemas by action pattern (`invoice.approve`, `invoice.*`), filled in by the file the
 * types command writes: `declare module '@audit-trail/client' { interface ActionSchemas { … } }`.
 */
export interface ActionSchemas extends Record<never, ActionSchemaTypes> {}

/** The prefix patterns that may apply to action `A`, longest first: `a.b.c` → [`a.b.*`, `a.*`]. */
type PrefixPatterns<A extends string, Before extends string = ''> = A extends `${infer Head}.${infer Rest}`
  ? [...PrefixPatterns<Rest, `${Before}${Head}.`>, `${Before}${Head}.*`]
  : [];

/** No schema applies. */
interface NoSchema {
  mode: 'none';
}

type FirstDeclared<Patterns, S> = Patterns extends [infer P, ...infer Rest]
  ? P extends keyof S
    ? S[P]
    : FirstDeclared<Rest, S>
  : NoSchema;

/**
 * The schema that applies to action `A`, as the service picks it: the action's own, else the longest
 * `prefix.*` that matches (`invoice.line.*` before `invoice.*`), else none. An action that is not a
 * literal type (a `string`) has none: it cannot be known before run time.
 */
export type SchemaOf<A extends string, S = ActionSchemas> = A extends keyof S
  ? S[A]
  : FirstDeclared<PrefixPatterns<A>, S>;

type Member = 'actor' | 'resource' | 'context';
/** A member the schema lets be null (or absent: the service checks an absent member as null) is optional. */
type Members<E extends ActionSchemaTypes> = { [K in Member as null extends E[K] ? never : K]: E[K] } & {
  [K in Member as null extends E[K] ? K : never]?: E[K];
};

/**
 * An event of action `A` as `record()` and `append()` take it: under an enforced schema, its actor,
 * resource and context have the schema's types; under a warn schema or none, any event (NewEvent).
 */
export type RecordedEvent<A extends string, S = ActionSchemas> =
  SchemaOf<A, S> extends infer E
    ? E extends ActionSchemaTypes & { mode: 'enforce' }
      ? Omit<NewEvent, 'action' | Member> & { action: A } & Members<E>
      : NewEvent & { action: A }
    : never;
