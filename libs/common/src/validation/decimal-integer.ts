import { Transform } from 'class-transformer';

/** A decimal integer as written in a query string: digits only (no sign, exponent, fraction, hex or leading zero). */
const DECIMAL = /^(0|[1-9][0-9]{0,15})$/;

/**
 * Turns a query parameter written as a plain decimal integer into a number; anything else (an
 * empty value, `1.5`, `1e1`, `0x10`, `+7`, ` 2`, a repeated parameter) stays as sent and fails the
 * IsInt that follows, so it is a 400, never a number the client did not write.
 */
export const DecimalInteger = (): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && DECIMAL.test(value) ? Number(value) : value,
  );
