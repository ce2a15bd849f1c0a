import { registerDecorator, ValidationArguments } from 'class-validator';
import { parseSearchQuery, SearchQueryError } from '@app/common';

/** `q` (docs/contract.md §13): parsed with the grammar, so the message names what is wrong and its offset. */
export function IsSearchQuery() {
  return (target: object, propertyName: string): void => {
    registerDecorator({
      name: 'isSearchQuery',
      target: target.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) => problemWith(value) === null,
        defaultMessage: (args: ValidationArguments) => `${args.property} ${problemWith(args.value)}`,
      },
    });
  };
}

function problemWith(value: unknown): string | null {
  if (typeof value !== 'string') return 'must be a string';
  try {
    parseSearchQuery(value);
    return null;
  } catch (error) {
    if (error instanceof SearchQueryError) return error.message;
    throw error;
  }
}
