import {
  IsNotEmpty,
  IsString,
  MaxLength,
  registerDecorator,
  ValidationArguments,
  ValidationOptions,
} from 'class-validator';
import { unstorableReason } from '@app/hashing';

interface StorableLimits {
  maxDepth?: number;
  maxBytes?: number;
  /** Values (object members and array items, at any depth). */
  maxValues?: number;
}

/**
 * Rejects what PostgreSQL cannot store byte-faithfully (unsafe integers; NUL and lone surrogates,
 * which parseIJson has already refused in any string of a body), and what is over its limits.
 */
export function IsStorable(options: StorableLimits = {}, validation?: ValidationOptions) {
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
 * An event's text member (actor, action, resource), in a body and as a filter: a non-empty string
 * of at most `maxLength` characters. (U+0000 and lone surrogates never get here: every string of a
 * body and a query is refused with them before any DTO sees it, docs/contract.md §8.)
 */
export function IsEventText(maxLength: number) {
  // In the order they had as stacked decorators, which apply from the bottom up.
  const rules = [MaxLength(maxLength), IsNotEmpty(), IsString()];
  return (target: object, propertyName: string): void => rules.forEach((rule) => rule(target, propertyName));
}

function problemWith(
  value: unknown,
  { maxDepth, maxBytes, maxValues }: StorableLimits,
  _args: ValidationArguments,
): string | null {
  if (value === null || value === undefined) return null;
  if (maxValues !== undefined && holdsMoreValues(value, maxValues)) {
    return `must hold at most ${maxValues} values (object members and array items)`;
  }
  const reason = unstorableReason(value, 0, maxDepth ?? Infinity);
  if (reason) return `is not storable: ${reason}`;
  if (maxBytes !== undefined && Buffer.byteLength(JSON.stringify(value), 'utf8') > maxBytes) {
    return `must be at most ${maxBytes} bytes when serialized`;
  }
  return null;
}

/** Whether `value` holds more than `max` values (members and items, at any depth); stops counting at max + 1. */
function holdsMoreValues(value: unknown, max: number): boolean {
  let values = 0;
  const pending: unknown[] = [value];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next !== 'object' || next === null) continue;
    const items: unknown[] = Array.isArray(next) ? next : Object.values(next);
    if ((values += items.length) > max) return true;
    for (const item of items) if (typeof item === 'object' && item !== null) pending.push(item);
  }
  return false;
}
