import { MAX_CHAIN_NAME_LENGTH, MAX_IDEMPOTENCY_KEY_LENGTH, MAX_REQUEST_ID_LENGTH } from './limits';

/**
 * Ids as we issue them: a type prefix and a ULID (docs/contract.md §2). An id that does not match is
 * answered like an unknown one (404), without a database round trip.
 */
export const EVENT_ID = /^evt_[0-9A-HJKMNP-TV-Z]{26}$/;
export const CHAIN_ID = /^chn_[0-9A-HJKMNP-TV-Z]{26}$/;
/** A chain's name, as the caller chooses it (an event's `chain`, the `name` filter of GET /v1/chains). */
export const CHAIN_NAME = new RegExp(`^[A-Za-z0-9._:-]{1,${MAX_CHAIN_NAME_LENGTH}}$`);
/** CHAIN_NAME in words, for error messages. */
export const CHAIN_NAME_TEXT = `1-${MAX_CHAIN_NAME_LENGTH} characters of A-Z a-z 0-9 . _ : -`;
/** An X-Request-Id the caller may choose (else the service makes a UUID, which matches too). */
export const REQUEST_ID = new RegExp(`^[A-Za-z0-9._:-]{1,${MAX_REQUEST_ID_LENGTH}}$`);
/** An Idempotency-Key (docs/contract.md §7): 1–255 printable ASCII characters, not starting with a space. */
export const IDEMPOTENCY_KEY = new RegExp(String.raw`^[\x21-\x7e][\x20-\x7e]{0,${MAX_IDEMPOTENCY_KEY_LENGTH - 1}}$`);
/** IDEMPOTENCY_KEY in words, for error messages and the OpenAPI description. */
export const IDEMPOTENCY_KEY_TEXT = `1-${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters, the first not a space`;
/** An account's id and a key's id as we issue them (docs/contract.md §2, §12): anything else is answered as unknown (404). */
export const ACCOUNT_ID = /^acc_[0-9A-HJKMNP-TV-Z]{26}$/;
export const KEY_ID = /^key_[0-9A-HJKMNP-TV-Z]{26}$/;
/** A stream destination's id (docs/contract.md §16): anything else is answered as unknown (404). */
export const DESTINATION_ID = /^dst_[0-9A-HJKMNP-TV-Z]{26}$/;
/** An erasure's id (docs/contract.md §17). */
export const ERASURE_ID = /^era_[0-9A-HJKMNP-TV-Z]{26}$/;
/** Chain names starting with this are the service's own (`_audit`): clients cannot append to them (docs/contract.md §12). */
export const RESERVED_CHAIN_PREFIX = '_';
/** A chain name clients may append to: not starting with RESERVED_CHAIN_PREFIX (with CHAIN_NAME). */
export const APPENDABLE_CHAIN_NAME = new RegExp(`^(?!${RESERVED_CHAIN_PREFIX})`);
