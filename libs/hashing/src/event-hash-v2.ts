import { randomBytes } from 'node:crypto';
import { canonicalJson } from './canonical-json';
import { EventHashPayload, HEX_HASH, HEX_HASH_TEXT, sha256Hex } from './event-hash';

/*
 * Hash version 2 (docs/contract.md §17, docs/hashing.md "Version 2"): the hash covers a salted
 * commitment C(x) = hex(SHA-256(UTF-8(JCS([salt, x])))) of the actor, of the resource and of each
 * top-level context member instead of the value itself, so that a value and its salt can be
 * erased while the commitment, and with it the hash, stays.
 *
 * Decisions (the contract leaves them open):
 * - A null resource has no salt and hashes as `"resource": null`; an erased one reads null too
 *   but hashes as its kept commitment. A salt beside a null resource is an error.
 * - A null context hashes as `"context": null` and has no context salts or commitments; an empty
 *   context `{}` hashes as `{}`, and so does one whose every member was erased (its commitments
 *   then fill it). The hash's context is null exactly when the event's context is null.
 * - `salts.context` is present (possibly `{}`) when the context is an object, absent when null;
 *   `commitments` holds erased fields only, `commitments.context` only once a member is erased.
 * - A field with both a value (or salt) and a kept commitment is an error, not a choice between
 *   them: preferring the commitment would let a changed value verify, preferring the value would
 *   ignore what the erasure kept.
 * - A context member whose value is `undefined` does not exist (JSON drops it).
 */

/** A salt: 128 random bits as 32 lowercase hex characters. */
export const SALT_PATTERN = /^[0-9a-f]{32}$/;
export const SALT_TEXT = '32 lowercase hex characters';
/** A commitment is a SHA-256 digest written like every hash. */
export const COMMITMENT_PATTERN = HEX_HASH;
export const COMMITMENT_TEXT = HEX_HASH_TEXT;

export const isSalt = (value: unknown): value is string => typeof value === 'string' && SALT_PATTERN.test(value);
export const isCommitment = (value: unknown): value is string =>
  typeof value === 'string' && COMMITMENT_PATTERN.test(value);

/** The hashed members of a version-2 event: as in version 1, except that an erased actor reads null. */
export interface EventHashPayloadV2 extends Omit<EventHashPayload, 'actor'> {
  actor: string | null;
}

/** Per field: its salt (while kept) or its commitment (once erased). */
export interface FieldSecrets {
  actor?: string;
  resource?: string;
  context?: Record<string, string>;
}

/** The `hashing` member of a version-2 event on the wire (§17). */
export interface HashingV2 {
  version: 2;
  salts: FieldSecrets;
  commitments: FieldSecrets;
}

/** What version 2 hashes: commitments in place of the actor, the resource and each context member. */
export interface HashPayloadV2 {
  v: 2;
  id: string;
  chainId: string;
  position: number;
  action: string;
  timestamp: string;
  previousHash: string;
  actor: string;
  resource: string | null;
  context: Record<string, string> | null;
}

/** An (event, hashing) pair that does not determine a version-2 hash; `problems` says why. */
export class HashingV2Error extends Error {
  override readonly name = 'HashingV2Error';
  constructor(readonly problems: readonly string[]) {
    super(problems.join('; '));
  }
}

export function newSalt(): string {
  return randomBytes(16).toString('hex');
}

/** Fresh salts for exactly the fields that hold a value: the actor, a non-null resource, each context member. */
export function saltsFor(event: Pick<EventHashPayloadV2, 'actor' | 'resource' | 'context'>): FieldSecrets {
  const salts: FieldSecrets = {};
  if (event.actor !== null) salts.actor = newSalt();
  if (event.resource !== null) salts.resource = newSalt();
  if (event.context !== null) salts.context = Object.fromEntries(memberNames(event.context).map((m) => [m, newSalt()]));
  return salts;
}

/** C(value) = hex(SHA-256(UTF-8(JCS([salt, value])))) */
export function commitment(salt: string, value: unknown): string {
  if (!isSalt(salt)) throw new HashingV2Error([`a salt must be ${SALT_TEXT}`]);
  if (value === undefined) throw new HashingV2Error(['undefined has no JSON representation']);
  return commit(salt, value);
}

/** commitment() of a salt known to be one and a value that is not undefined. */
function commit(salt: string, value: unknown): string {
  // JSON.stringify writes a string, a finite number, a boolean and null exactly as JCS (and
  // canonicalize) does (see canonicalPayloadText in event-hash.ts); a salt needs no escaping.
  const text = isPrimitive(value) ? `["${salt}",${JSON.stringify(value)}]` : canonicalJson([salt, value]);
  return sha256Hex(text);
}

const isPrimitive = (value: unknown): boolean =>
  typeof value === 'string' ||
  (typeof value === 'number' && Number.isFinite(value)) ||
  typeof value === 'boolean' ||
  value === null;

/**
 * The version-2 hash of an event none of whose fields is erased, `saltOf(path)` giving the salt of
 * the field at `path` (`actor`, `resource`, `context.<m>`; it must return a salt, 32 lowercase hex
 * characters, as salt-seed.ts's derivation does): every commitment in one pass, the payload's text
 * written directly. Exactly computeEventHashV2(event, { version: 2, salts, commitments: {} }), `salts`
 * holding saltOf of each field that holds a value, without building the salts, the payload and the
 * checks of a hashing that may come from anywhere (each field here has a value and a salt, none a
 * kept commitment). Null when the event is not of that plain shape (an erased actor, a member whose
 * value is undefined, a member of an unexpected type): the caller then takes computeEventHashV2, which
 * says what is wrong or hashes the unusual alike.
 */
export function hashUnerasedV2(event: EventHashPayloadV2, saltOf: (path: string) => string): string | null {
  const { actor, resource, context } = event;
  const plain =
    isText(actor) &&
    (resource === null || isText(resource)) &&
    (context === null || (typeof context === 'object' && !Array.isArray(context))) &&
    isText(event.id) &&
    isText(event.chainId) &&
    Number.isFinite(event.position) &&
    isText(event.action) &&
    isText(event.timestamp) &&
    isText(event.previousHash);
  if (!plain) return null;
  let contextText = 'null';
  if (context !== null) {
    // canonicalJson of the object of commitments: its members sorted as JCS sorts them (UTF-16 code
    // units, what Array.prototype.sort compares), each a commitment, which needs no escaping.
    const members = Object.keys(context).sort();
    contextText = '{';
    for (let i = 0; i < members.length; i++) {
      const m = members[i]!;
      const value = context[m];
      if (value === undefined) return null;
      contextText += `${i === 0 ? '' : ','}${str(m)}:"${commit(saltOf(CONTEXT + m), value)}"`;
    }
    contextText += '}';
  }
  const actorC = commit(saltOf('actor'), actor);
  const resourceText = resource === null ? 'null' : `"${commit(saltOf('resource'), resource)}"`;
  return sha256Hex(
    `{"action":${str(event.action)},"actor":"${actorC}","chainId":${str(event.chainId)},"context":${contextText},` +
      `"id":${str(event.id)},"position":${str(event.position)},"previousHash":${str(event.previousHash)},"resource":${resourceText},"timestamp":${str(event.timestamp)},"v":2}`,
  );
}

/**
 * hex(SHA-256(UTF-8(JCS(hashPayloadV2Of(event, hashing))))); throws HashingV2Error when they disagree.
 * An event whose hashing keeps no commitment and salts exactly its valued fields (every event before
 * an erasure) is hashed in one pass (hashUnerasedV2); anything else takes hashPayloadV2Of's checks.
 */
export function computeEventHashV2(event: EventHashPayloadV2, hashing: HashingV2): string {
  assertHashingShape(event, hashing);
  const saltOf = plainSalts(event, hashing);
  return (
    (saltOf && hashUnerasedV2(event, saltOf)) ?? sha256Hex(canonicalPayloadTextV2(hashPayloadV2Of(event, hashing)))
  );
}

/**
 * The salt of each path when `hashing` keeps no commitment and holds a well-formed salt for exactly
 * the fields of `event` that hold a value (what hashPayloadV2Of would accept without a problem, as
 * far as salts go); null otherwise, and hashPayloadV2Of then says what is wrong.
 */
function plainSalts(event: EventHashPayloadV2, { version, salts, commitments }: HashingV2) {
  if (version !== 2 || commitments.actor !== undefined || commitments.resource !== undefined) return null;
  if (memberNames(commitments.context ?? {}).length > 0) return null;
  const actor = salts.actor;
  const resource = salts.resource;
  const context = salts.context ?? {};
  if (!isSalt(actor) || (event.resource === null ? resource !== undefined : !isSalt(resource))) return null;
  if (event.context === null || typeof event.context !== 'object') {
    if (memberNames(context).length > 0) return null;
  } else {
    const valued = Object.keys(event.context);
    if (valued.length !== memberNames(context).length || !valued.every((m) => isSalt(own(context, m)))) return null;
  }
  return (path: string): string =>
    path === 'actor' ? actor : path === 'resource' ? resource! : context[path.slice(CONTEXT.length)]!;
}

/**
 * The version-2 payload: each field's commitment from its value and salt while kept, from
 * `hashing.commitments` once erased. Every inconsistency is collected into one HashingV2Error.
 */
export function hashPayloadV2Of(event: EventHashPayloadV2, hashing: HashingV2): HashPayloadV2 {
  assertHashingShape(event, hashing);
  const problems = typeProblems(event);
  if (hashing.version !== 2) problems.push(`hashing.version is ${String(hashing.version)}, not 2`);
  const { salts, commitments } = hashing;
  const field = (name: string, value: unknown, salt: unknown, kept: unknown): string | null =>
    fieldCommitment(name, value, salt, kept, problems);
  const actor = field('actor', event.actor ?? ABSENT, salts.actor, commitments.actor);
  if (actor === null) problems.push('actor has neither a value nor a commitment');
  const resource = field('resource', event.resource ?? ABSENT, salts.resource, commitments.resource);
  const context = contextCommitments(event.context, hashing, problems);
  if (problems.length > 0) throw new HashingV2Error(problems.map((p) => `event ${event.id}: ${p}`));
  const { id, chainId, position, action, timestamp, previousHash } = event;
  return { v: 2, id, chainId, position, action, timestamp, previousHash, actor: actor ?? '', resource, context };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * What is wrong with the shape of a hashing read from storage or a file (attack finding 8: an
 * erasure stored `{"commitments":{…}}` without salts): `salts` and `commitments` objects, their
 * `context` an object when present. The field checks of hashPayloadV2Of need that shape.
 */
export function hashingShapeProblems(hashing: unknown): string[] {
  if (!isRecord(hashing)) return ['hashing must be an object'];
  const problems: string[] = [];
  for (const part of ['salts', 'commitments'] as const) {
    const secrets = hashing[part];
    if (!isRecord(secrets)) problems.push(`hashing.${part} must be an object`);
    else if (secrets.context !== undefined && !isRecord(secrets.context))
      problems.push(`hashing.${part}.context must be an object`);
  }
  return problems;
}

/** Throws HashingV2Error (never a TypeError) when `hashing` is not shaped as one. */
function assertHashingShape(event: { id: unknown }, hashing: unknown): asserts hashing is HashingV2 {
  const problems = hashingShapeProblems(hashing);
  if (problems.length > 0) throw new HashingV2Error(problems.map((p) => `event ${String(event.id)}: ${p}`));
}

/** The prefix of a context member's field path, `context.<m>`. */
const CONTEXT = 'context.';

/** Stands for "no value": a null actor or resource, a missing context member (a member's null is a value). */
const ABSENT = Symbol('absent');

function typeProblems({ actor, resource, context }: EventHashPayloadV2): string[] {
  const problems: string[] = [];
  if (actor !== null && typeof actor !== 'string') problems.push('actor must be a string or null');
  if (resource !== null && typeof resource !== 'string') problems.push('resource must be a string or null');
  if (context !== null && (typeof context !== 'object' || Array.isArray(context))) {
    problems.push('context must be an object or null');
  }
  return problems;
}

/** One field's commitment, or null when it holds no value and none was erased; problems go to `problems`. */
function fieldCommitment(name: string, value: unknown, salt: unknown, kept: unknown, problems: string[]) {
  if (kept !== undefined) {
    if (!isCommitment(kept)) problems.push(`the commitment of ${name} must be ${COMMITMENT_TEXT}`);
    if (value !== ABSENT) problems.push(`${name} has both a value and a commitment`);
    if (salt !== undefined) problems.push(`${name} is erased but its salt remains`);
    return typeof kept === 'string' ? kept : null;
  }
  if (value === ABSENT) {
    if (salt !== undefined) problems.push(`${name} has a salt but no value`);
    return null;
  }
  if (!isSalt(salt)) {
    problems.push(salt === undefined ? `${name} has a value but no salt` : `the salt of ${name} must be ${SALT_TEXT}`);
    return null;
  }
  return commitment(salt, value);
}

function contextCommitments(context: Record<string, unknown> | null, hashing: HashingV2, problems: string[]) {
  const salts = hashing.salts.context ?? {};
  const kept = hashing.commitments.context ?? {};
  if (context === null) {
    if (memberNames(salts).length + memberNames(kept).length > 0) {
      problems.push('context is null but has salts or commitments');
    }
    return null;
  }
  const names = new Set([...memberNames(context), ...memberNames(salts), ...memberNames(kept)]);
  const entries: Array<[string, string]> = [];
  for (const m of names) {
    const value = own(context, m) === undefined ? ABSENT : context[m];
    const c = fieldCommitment(CONTEXT + m, value, own(salts, m), own(kept, m), problems);
    if (c !== null) entries.push([m, c]);
  }
  // fromEntries defines own properties, so a member named "__proto__" stays a member.
  return Object.fromEntries(entries);
}

function memberNames(record: Record<string, unknown>): string[] {
  return Object.keys(record).filter((m) => record[m] !== undefined);
}

function own<T>(record: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

const str = JSON.stringify;
const isText = (value: unknown): value is string => typeof value === 'string';

/**
 * Exactly canonicalJson(payload), without the general canonicalizer for the fixed members (as
 * canonicalPayloadText does for version 1): their JCS order is fixed, and "v" sorts last. A
 * member of an unexpected type takes the general path, so the two can never differ.
 */
export function canonicalPayloadTextV2(p: HashPayloadV2): string {
  const typed =
    isText(p.id) &&
    isText(p.chainId) &&
    Number.isFinite(p.position) &&
    isText(p.action) &&
    isText(p.timestamp) &&
    isText(p.previousHash) &&
    p.v === 2;
  if (!typed) return canonicalJson(p);
  return (
    `{"action":${str(p.action)},"actor":${str(p.actor)},"chainId":${str(p.chainId)},"context":${p.context === null ? 'null' : canonicalJson(p.context)},` +
    `"id":${str(p.id)},"position":${str(p.position)},"previousHash":${str(p.previousHash)},"resource":${str(p.resource)},"timestamp":${str(p.timestamp)},"v":2}`
  );
}

/** A field path of an erasure (§17): `actor`, `resource`, `context.<m>` (one top-level member) or `context.*`. */
export type FieldPath =
  { kind: 'actor' } | { kind: 'resource' } | { kind: 'context'; member: string } | { kind: 'context.*' };

/** Hashed members that no erasure may touch (§17: `422 NOT_ERASABLE`, where any other unknown path is `400`). */
export const NEVER_ERASABLE: readonly string[] = ['id', 'chainId', 'position', 'action', 'timestamp', 'previousHash'];

/**
 * The field a path names, or null when it names none. Everything after `context.` is the member's
 * name, dots included (`context.a.b` is the member "a.b"); `context.*` always means every member.
 */
export function parseFieldPath(path: string): FieldPath | null {
  if (path === 'actor' || path === 'resource' || path === 'context.*') return { kind: path };
  // A member's name is never empty (`context.` names nothing).
  if (path.startsWith(CONTEXT) && path.length > CONTEXT.length)
    return { kind: 'context', member: path.slice(CONTEXT.length) };
  return null;
}

export interface ErasureResult<E extends EventHashPayloadV2> {
  /** The event without the erased values: actor and resource read null, context members are absent. */
  event: E;
  /** The hashing without their salts and with their commitments. */
  hashing: HashingV2;
  /** The paths this call erased, sorted: a field that held no value (or was erased before) is not listed. */
  erased: string[];
}

/**
 * Erases `fields` of one version-2 event; the hash of the result is the hash of the input (checked
 * here: an erasure that would change it throws). Throws HashingV2Error for a path that names no
 * erasable field and for an (event, hashing) pair that does not hash. Does not modify its inputs.
 */
export function erase<E extends EventHashPayloadV2>(
  event: E,
  hashing: HashingV2,
  fields: readonly string[],
): ErasureResult<E> {
  const paths = fields.map((f) => parseFieldPath(f) ?? badPath(f));
  const before = hashPayloadV2Of(event, hashing);
  const erasing = new Set(paths.flatMap((p) => valuedPaths(event, p)));
  const result = { event: eventWithout(event, erasing), hashing: hashingWithout(hashing, before, erasing) };
  if (computeEventHashV2(result.event, result.hashing) !== sha256Hex(canonicalPayloadTextV2(before))) {
    throw new Error(`erasing ${[...erasing].join(', ')} would change the hash of event ${event.id}`);
  }
  return { ...result, erased: [...erasing].sort() };
}

/** The erased field paths as the wire's `erased` shows them: sorted by UTF-16 code units, as JCS sorts. */
export function erasedFields(hashing: HashingV2): string[] {
  // A malformed hashing (verification reports it) names no erased field it cannot read.
  if (hashingShapeProblems(hashing).length > 0) return [];
  const { actor, resource, context } = hashing.commitments;
  if (actor === undefined && resource === undefined && context === undefined) return [];
  return secretsByPath(hashing.commitments)
    .map(([path]) => path)
    .sort();
}

function badPath(path: string): never {
  const why = NEVER_ERASABLE.includes(path)
    ? 'is never erasable'
    : 'is not actor, resource, context.<member> or context.*';
  throw new HashingV2Error([`field ${JSON.stringify(path)} ${why}`]);
}

/** The paths of `path` that hold a value in `event`. */
function valuedPaths(event: EventHashPayloadV2, path: FieldPath): string[] {
  const members = event.context === null ? [] : memberNames(event.context);
  switch (path.kind) {
    case 'actor':
    case 'resource':
      return event[path.kind] === null ? [] : [path.kind];
    case 'context':
      return members.includes(path.member) ? [CONTEXT + path.member] : [];
    case 'context.*':
      return members.map((m) => CONTEXT + m);
  }
}

function eventWithout<E extends EventHashPayloadV2>(event: E, erasing: ReadonlySet<string>): E {
  const context =
    event.context === null
      ? null
      : Object.fromEntries(Object.entries(event.context).filter(([m]) => !erasing.has(CONTEXT + m)));
  return {
    ...event,
    actor: erasing.has('actor') ? null : event.actor,
    resource: erasing.has('resource') ? null : event.resource,
    context,
  };
}

/** Moves each erased field from `salts` to `commitments`, taking its commitment from the payload it hashed into. */
function hashingWithout(hashing: HashingV2, payload: HashPayloadV2, erasing: ReadonlySet<string>): HashingV2 {
  const salts = [...secretsByPath(hashing.salts)].filter(([path]) => !erasing.has(path));
  const commitments = [...secretsByPath(hashing.commitments)];
  for (const path of erasing) {
    const c = path.startsWith(CONTEXT)
      ? own(payload.context ?? {}, path.slice(CONTEXT.length))
      : payload[path as 'actor'];
    if (c === undefined || c === null) throw new Error(`${path} of event ${payload.id} has no commitment`);
    commitments.push([path, c]);
  }
  return {
    version: 2,
    salts: secretsOf(salts, hashing.salts.context !== undefined),
    commitments: secretsOf(commitments, false),
  };
}

/** [path, salt or commitment] of each field, in the paths of §17. */
function secretsByPath({ actor, resource, context }: FieldSecrets): Array<[string, string]> {
  const top: Array<[string, string | undefined]> = [
    ['actor', actor],
    ['resource', resource],
  ];
  const members = Object.entries(context ?? {}).map(([m, v]): [string, string] => [CONTEXT + m, v]);
  return [...top.filter((e): e is [string, string] => e[1] !== undefined), ...members];
}

/** The inverse of secretsByPath; `context` is there when a member is, or when `withContext`. */
function secretsOf(entries: Array<[string, string]>, withContext: boolean): FieldSecrets {
  const secrets: FieldSecrets = {};
  const members: Array<[string, string]> = [];
  for (const [path, value] of entries) {
    if (path === 'actor' || path === 'resource') secrets[path] = value;
    else members.push([path.slice(CONTEXT.length), value]);
  }
  // fromEntries defines own properties, so a member named "__proto__" stays a member.
  if (withContext || members.length > 0) secrets.context = Object.fromEntries(members);
  return secrets;
}
