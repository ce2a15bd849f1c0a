import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The id of the request being handled, for everything that logs while handling it through Nest's
 * Logger: so every line of a request names the request (PinoNestLogger adds it as `reqId`).
 */
export const requestIds = new AsyncLocalStorage<string>();
