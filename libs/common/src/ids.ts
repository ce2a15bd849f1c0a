/**
 * Ids as we issue them: a type prefix and a ULID (contract §2). An id that does not match is
 * answered like an unknown one (404), without a database round trip.
 */
export const EVENT_ID = /^evt_[0-9A-HJKMNP-TV-Z]{26}$/;
export const CHAIN_ID = /^chn_[0-9A-HJKMNP-TV-Z]{26}$/;
/** Any of our ids (cursors carry event or chain ids). */
export const ANY_ID = /^[a-z]{3}_[0-9A-HJKMNP-TV-Z]{26}$/;

/** An X-Request-Id the caller may choose (else the service makes a UUID, which matches too). */
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** An Idempotency-Key (contract §7): 1–255 printable ASCII characters, not starting with a space. */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e][\x20-\x7e]{0,254}$/;
