/**
 * Ids as we issue them: a type prefix and a ULID (contract §2). An id that does not match is
 * answered like an unknown one (404), without a database round trip.
 */
export const EVENT_ID = /^evt_[0-9A-HJKMNP-TV-Z]{26}$/;
export const CHAIN_ID = /^chn_[0-9A-HJKMNP-TV-Z]{26}$/;
