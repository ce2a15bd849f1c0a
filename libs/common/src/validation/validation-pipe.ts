import { ArgumentMetadata, Type, ValidationError, ValidationPipe } from '@nestjs/common';
import { DECORATORS } from '@nestjs/swagger';
import { AppError, FieldError } from '../errors';

const BODY_ITEMS = Symbol('body items');

/**
 * On a body DTO's array member: each item is validated as a body of `item` of its own would be
 * (`@Body() dto: item`), by the same code, and named by its path: `events[3].actor`, or
 * `events[3]` for an item that is not an object, with the same messages. Bodies are never run
 * through class-transformer (see below), so `@ValidateNested` + `@Type` would build nothing.
 * The member's own rules (an array, how many items) are checked first; items only when they pass.
 */
export function EachBodyItem(item: Type<object>): PropertyDecorator {
  return (target, property) => {
    const items = (Reflect.getMetadata(BODY_ITEMS, target.constructor) ?? {}) as Record<string, Type<object>>;
    Reflect.defineMetadata(BODY_ITEMS, { ...items, [String(property)]: item }, target.constructor);
  };
}

/** class-validator rules that say a value has the wrong type: when one fails, the others say nothing more. */
const TYPE_RULES = new Set(['isString', 'isInt', 'isNumber', 'isBoolean', 'isObject', 'isArray', 'isDateString']);

/**
 * Flattens class-validator's tree into `details.fields` entries with dotted paths: one entry per
 * distinct message, and only the type error for a value of the wrong type (`{"actor":5}` is
 * "actor must be a string", not also "shorter than 256 characters").
 */
export function toFieldErrors(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const rules = Object.entries(error.constraints ?? {});
    const typeError = rules.find(([rule]) => TYPE_RULES.has(rule));
    const messages = (typeError ? [typeError] : rules).map(([rule, message]) =>
      // forbidNonWhitelisted says "property x should not exist": say it in the contract's words.
      rule === 'whitelistValidation' ? `unknown field '${field}'` : message,
    );
    const own = [...new Set(messages)].map((message) => ({ field, message }));
    return [...own, ...toFieldErrors(error.children ?? [], field)];
  });
}

/**
 * whitelist + forbidNonWhitelisted: every field or query parameter a DTO does not declare is a
 * 400. A body must be one JSON object (not an array or a scalar) before any DTO sees it.
 *
 * A body is validated as sent, never rebuilt: class-transformer walks every nested object and
 * takes an own `constructor` member for the object's class (a 500 for `{"constructor":1}`), skips
 * members named like methods (`toString`), and Nest deletes `constructor` and `prototype` at any
 * depth, so an event would be stored and hashed without them (docs/contract.md §8: names are kept as
 * sent). JSON values already have their types, so a body needs no conversion: its DTO gets the
 * parsed members as they are (parseIJson has refused `__proto__`). Query strings still go through
 * class-transformer (`limit=20` becomes a number).
 */
class StrictValidationPipe extends ValidationPipe {
  /**
   * Per query DTO, the members an empty query string gave it once it passed: that input is a
   * constant and a DTO's rules are pure, so it always will. Later empty queries (every
   * `NoQueryDto` request, a proof or a list page without parameters) get a fresh instance with
   * those members, without class-transformer and class-validator going over nothing again. The
   * members are usually `undefined` or a default (class fields are defined, ES2022), and only a
   * DTO whose members are all primitives is remembered, so no two requests share an object.
   */
  private readonly emptyQueryMembers = new WeakMap<object, Record<string, unknown>>();

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'query' && this.toValidate(metadata) && isEmptyObject(value)) {
      return this.transformEmptyQuery(value, metadata, metadata.metatype as new () => object);
    }
    if (metadata.type !== 'body') return super.transform(value, metadata);
    const { metatype } = metadata;
    if (!metatype || !this.toValidate(metadata)) {
      if (isObject(value)) return value;
      throw AppError.validation([notAnObject('body')]);
    }
    const { dto, fields } = await this.validateBody(value, metatype as Type<object>);
    if (fields.length > 0) throw AppError.validation(fields);
    return dto;
  }

  /** `value` as a `metatype` (see EachBodyItem), or what is wrong with it, its fields named under `path`. */
  private async validateBody(
    value: unknown,
    metatype: Type<object>,
    path = '',
  ): Promise<{ dto: Record<string, unknown>; fields: FieldError[] }> {
    if (!isObject(value)) return { dto: {}, fields: [notAnObject(path || 'body')] };
    // An own `constructor` would hide the DTO's class from class-validator: it is unknown like any other.
    const { constructor: ctor, ...members } = value;
    const dto = Object.assign(Object.create(metatype.prototype as object) as object, members);
    const errors = refuseNulls(metatype, members, await this.validate(dto, this.validatorOptions));
    if (Object.hasOwn(value, 'constructor')) errors.unshift(unknownMember('constructor', ctor));
    const fields = toFieldErrors(errors).map((f) => ({ ...f, field: path ? `${path}.${f.field}` : f.field }));
    const items = (Reflect.getMetadata(BODY_ITEMS, metatype) ?? {}) as Record<string, Type<object>>;
    for (const [member, item] of Object.entries(items)) {
      const list = dto[member];
      if (!Array.isArray(list) || errors.some((e) => e.property === member)) continue;
      const checked = await Promise.all(
        list.map((v, i) => this.validateBody(v, item, `${path && `${path}.`}${member}[${i}]`)),
      );
      fields.push(...checked.flatMap((c) => c.fields));
      dto[member] = checked.map((c) => c.dto);
    }
    return { dto, fields };
  }

  private async transformEmptyQuery(
    value: object,
    metadata: ArgumentMetadata,
    metatype: new () => object,
  ): Promise<unknown> {
    const members = this.emptyQueryMembers.get(metatype);
    if (members) return Object.assign(new metatype(), members);
    const dto: unknown = await super.transform(value, metadata);
    if (dto instanceof metatype && Object.values(dto).every(isPrimitive))
      this.emptyQueryMembers.set(metatype, { ...dto });
    return dto;
  }
}

/**
 * `null` for a member whose OpenAPI description does not say `nullable: true` is refused here, for
 * every body DTO at once, as `<member> must not be null` (instead of what its own rules said, if
 * anything: IsOptional lets null through as if absent, and a handler then met a null it was not
 * typed for, a 500). The description and the validation cannot disagree on null: the members
 * the contract lets be null (an event's resource, context and chain, a destination's q, a
 * retention's days, a hold's reason) say so in their @ApiProperty, and so accept it. A member the
 * DTO does not describe is left to its own rules (an unknown one is refused as unknown).
 */
function refuseNulls(
  metatype: Type<object>,
  members: Record<string, unknown>,
  errors: ValidationError[],
): ValidationError[] {
  const refused = Object.keys(members).filter((name) => members[name] === null && !mayBeNull(metatype, name));
  if (refused.length === 0) return errors;
  return [
    ...errors.filter((error) => !refused.includes(error.property)),
    ...refused.map((property) => ({
      property,
      value: null,
      constraints: { isNotNull: `${property} must not be null` },
      children: [],
    })),
  ];
}

/** Whether `property` of `metatype` may be null: its @ApiProperty says `nullable: true`, or it has none. */
function mayBeNull(metatype: Type<object>, property: string): boolean {
  const described = Reflect.getMetadata(DECORATORS.API_MODEL_PROPERTIES, metatype.prototype as object, property) as
    { nullable?: boolean } | undefined;
  return described === undefined || described.nullable === true;
}

function isEmptyObject(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  for (const _ in value) return false;
  return true;
}

function isPrimitive(value: unknown): boolean {
  return value === null || (typeof value !== 'object' && typeof value !== 'function');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function notAnObject(field: string): FieldError {
  return { field, message: `${field} must be a JSON object` };
}

function unknownMember(property: string, value: unknown): ValidationError {
  return {
    property,
    value,
    constraints: { whitelistValidation: `property ${property} should not exist` },
    children: [],
  };
}

/** Registered with APP_PIPE, so e2e tests run exactly the production pipeline. */
export function createValidationPipe(): ValidationPipe {
  return new StrictValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: false,
    transform: true,
    exceptionFactory: (errors) => AppError.validation(toFieldErrors(errors)),
  });
}
