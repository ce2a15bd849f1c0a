import { ValueTransformer } from 'typeorm';

/**
 * A SHA-256 hash stored as its 32 bytes (`bytea`, migration 1765300000000) and handled everywhere
 * else (API, exports, logs) as 64 lowercase hex characters: pg returns a Buffer, written as hex.
 */
export const hexBytes: ValueTransformer = {
  to: (value: string | null | undefined) => (value === null || value === undefined ? value : Buffer.from(value, 'hex')),
  from: (value: Buffer | string | null) =>
    value === null ? null : Buffer.isBuffer(value) ? value.toString('hex') : value,
};
