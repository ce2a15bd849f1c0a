/** POST /v1/events/batch (contract §9): at most this many events per request … */
export const MAX_BATCH_EVENTS = 1000;
/** … and a body of at most this many bytes (413 beyond). */
export const MAX_BATCH_BODY_BYTES = 8 * 1024 * 1024;
