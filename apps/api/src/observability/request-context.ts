import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from 'pino';

/**
 * The logger of the request being handled (a child carrying its reqId), for everything that logs
 * while handling it through Nest's Logger: so every line of a request names the request.
 */
export const requestLoggers = new AsyncLocalStorage<Logger>();
