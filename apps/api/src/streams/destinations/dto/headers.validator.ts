import { registerDecorator, ValidationArguments } from 'class-validator';

export const MAX_HEADERS = 20;
export const MAX_HEADER_VALUE_LENGTH = 1000;
const MAX_HEADER_NAME_LENGTH = 100;
/** An RFC 7230 token: a header's name. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Printable ASCII and spaces: a value no receiver misreads, and nothing that splits a header. */
export const HEADER_VALUE = /^[\x20-\x7e]*$/;
/** Headers the service sets itself (or that frame the request): a destination cannot replace them. */
const RESERVED = new Set([
  'host',
  'content-length',
  'content-type',
  'content-encoding',
  'authorization',
  'dd-api-key',
  'transfer-encoding',
  'connection',
]);

/** Why `name` cannot be a custom header's name, or null. */
function nameProblem(name: string): string | null {
  if (name.length > MAX_HEADER_NAME_LENGTH || !TOKEN.test(name))
    return `header name '${name.slice(0, MAX_HEADER_NAME_LENGTH)}' must be an RFC 7230 token of at most ${MAX_HEADER_NAME_LENGTH} characters`;
  const lower = name.toLowerCase();
  if (RESERVED.has(lower) || lower.startsWith('webhook-'))
    return `header ${name} is set by the service and cannot be given`;
  return null;
}

/** Why `value` cannot be a custom headers object, or null. The message never repeats a value. */
export function headersProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'must be an object of header names and string values';
  const entries = Object.entries(value);
  if (entries.length > MAX_HEADERS) return `must have at most ${MAX_HEADERS} headers`;
  const seen = new Set<string>();
  for (const [name, text] of entries) {
    const problem = nameProblem(name);
    if (problem) return problem;
    if (seen.has(name.toLowerCase())) return `header ${name} is given twice`;
    seen.add(name.toLowerCase());
    if (typeof text !== 'string' || text.length > MAX_HEADER_VALUE_LENGTH || !HEADER_VALUE.test(text))
      return `header ${name} must have a value of at most ${MAX_HEADER_VALUE_LENGTH} printable ASCII characters`;
  }
  return null;
}

/** Custom headers (docs/contract.md §16): at most 20, RFC 7230 names, printable values, none the service sets. */
export function IsDestinationHeaders() {
  return (target: object, propertyName: string): void => {
    registerDecorator({
      name: 'isDestinationHeaders',
      target: target.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) => headersProblem(value) === null,
        defaultMessage: (args: ValidationArguments) => `${args.property} ${headersProblem(args.value)}`,
      },
    });
  };
}
