import {
  IsNotEmpty,
  IsString,
  MaxLength,
  registerDecorator,
  ValidationArguments,
  ValidationOptions,
} from 'class-validator';
import { unstorableReason } from '@app/hashing';

/** Rejects what PostgreSQL cannot store byte-faithfully (NUL, lone surrogates, unsafe integers). */
export function IsStorable(options: { maxDepth?: number; maxBytes?: number } = {}, validation?: ValidationOptions) {
  return (target: object, propertyName: string): void => {
    registerDecorator({
      name: 'isStorable',
      target: target.constructor,
      propertyName,
      options: validation,
      validator: {
        validate: (value: unknown, args: ValidationArguments) => problemWith(value, options, args) === null,
        defaultMessage: (args: ValidationArguments) =>
          `${args.property} ${problemWith(args.value, options, args) ?? 'is not valid'}`,
      },
    });
  };
}

/**
 * An event's text member (actor, action, resource), in a body and as a filter: a non-empty,
 * storable string of at most `maxLength` characters.
 */
export function IsEventText(maxLength: number) {
  // In the order they had as stacked decorators, which apply from the bottom up.
  const rules = [IsStorable(), MaxLength(maxLength), IsNotEmpty(), IsString()];
  return (target: object, propertyName: string): void => rules.forEach((rule) => rule(target, propertyName));
}

function problemWith(
  value: unknown,
  { maxDepth, maxBytes }: { maxDepth?: number; maxBytes?: number },
  _args: ValidationArguments,
): string | null {
  if (value === null || value === undefined) return null;
  const reason = unstorableReason(value, 0, maxDepth ?? Infinity);
  if (reason) return `is not storable: ${reason}`;
  if (maxBytes !== undefined && Buffer.byteLength(JSON.stringify(value), 'utf8') > maxBytes) {
    return `must be at most ${maxBytes} bytes when serialized`;
  }
  return null;
}
