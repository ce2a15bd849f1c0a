import { ArgumentMetadata, ValidationError, ValidationPipe } from '@nestjs/common';
import { AppError, FieldError } from '../errors';

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
 * depth, so an event would be stored and hashed without them (contract §8: names are kept as
 * sent). JSON values already have their types, so a body needs no conversion: its DTO gets the
 * parsed members as they are (parseIJson has refused `__proto__`). Query strings still go through
 * class-transformer (`limit=20` becomes a number).
 */
class StrictValidationPipe extends ValidationPipe {
  /**
   * Query DTOs for which an empty query string has given an instance without members and no
   * error. That input is a constant and a DTO's rules are pure, so it always will: later empty
   * queries (every `NoQueryDto` request) get a fresh instance without class-transformer and
   * class-validator going over nothing again.
   */
  private readonly emptyQueryPasses = new WeakSet<object>();

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'query' && this.toValidate(metadata) && isEmptyObject(value)) {
      return this.transformEmptyQuery(value, metadata, metadata.metatype as new () => object);
    }
    if (metadata.type !== 'body') return super.transform(value, metadata);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw AppError.validation([{ field: 'body', message: 'body must be a JSON object' }]);
    }
    const { metatype } = metadata;
    if (!metatype || !this.toValidate(metadata)) return value;
    // The members as parsed, on the DTO's class (one copy). An own `constructor` would hide that
    // class from class-validator: it is left out, and unknown like any other member.
    const dto = Object.create(metatype.prototype as object) as Record<string, unknown>;
    for (const name of Object.keys(value))
      if (name !== 'constructor') dto[name] = (value as Record<string, unknown>)[name];
    const errors = await this.validate(dto, this.validatorOptions);
    if (Object.hasOwn(value, 'constructor')) {
      errors.unshift(unknownMember('constructor', (value as Record<string, unknown>).constructor));
    }
    if (errors.length > 0) throw this.exceptionFactory(errors);
    return dto;
  }

  private async transformEmptyQuery(
    value: object,
    metadata: ArgumentMetadata,
    metatype: new () => object,
  ): Promise<unknown> {
    if (this.emptyQueryPasses.has(metatype)) return new metatype();
    const dto: unknown = await super.transform(value, metadata);
    if (dto instanceof metatype && Object.keys(dto).length === 0) this.emptyQueryPasses.add(metatype);
    return dto;
  }
}

function isEmptyObject(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  for (const _ in value) return false;
  return true;
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
