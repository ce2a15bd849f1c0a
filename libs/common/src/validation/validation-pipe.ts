import { ArgumentMetadata, ValidationError, ValidationPipe } from '@nestjs/common';
import { AppError, FieldError } from '../errors';

/** Flattens class-validator's tree into `details.fields` entries with dotted paths. */
export function toFieldErrors(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.entries(error.constraints ?? {}).map(([rule, message]) => ({
      field,
      // forbidNonWhitelisted says "property x should not exist": say it in the contract's words.
      message: rule === 'whitelistValidation' ? `unknown field '${field}'` : message,
    }));
    return [...own, ...toFieldErrors(error.children ?? [], field)];
  });
}

/**
 * whitelist + forbidNonWhitelisted: every field or query parameter a DTO does not declare is a
 * 400. A body must be one JSON object (not an array or a scalar) before any DTO sees it.
 */
class StrictValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && (typeof value !== 'object' || value === null || Array.isArray(value))) {
      throw AppError.validation([{ field: 'body', message: 'body must be a JSON object' }]);
    }
    const protoKey = metadata.type === 'body' ? protoKeyPath(value) : null;
    if (protoKey) {
      // Nest's pipe would silently delete it (prototype-pollution guard): refuse instead of altering.
      throw AppError.validation([{ field: protoKey, message: "keys named '__proto__' are not accepted" }]);
    }
    return super.transform(value, metadata);
  }
}

function protoKeyPath(value: unknown, path = ''): string | null {
  if (typeof value !== 'object' || value === null) return null;
  for (const [key, child] of Object.entries(value)) {
    const childPath = path ? `${path}.${key}` : key;
    if (key === '__proto__') return childPath;
    const found = protoKeyPath(child, childPath);
    if (found) return found;
  }
  return null;
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
