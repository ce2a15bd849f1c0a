/** The input limits of the API, named once (contract §4, §8). */

/** A request body, in bytes (413 beyond). */
export const MAX_BODY_BYTES = 64 * 1024;
/** An event's `context`, serialized, in bytes. */
export const MAX_CONTEXT_BYTES = 32 * 1024;
/** An event's `context`, in levels of objects and arrays (the context object itself is level 1). */
export const MAX_CONTEXT_DEPTH = 32;
/**
 * Any request body, in levels, checked while it is parsed so nothing recursive ever sees deeper
 * input. Above what a valid body needs (a context inside its envelope), so a context that is too
 * deep is still answered on `context` with its own limit.
 */
export const MAX_BODY_DEPTH = 2 * MAX_CONTEXT_DEPTH;
