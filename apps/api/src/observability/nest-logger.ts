import { Inject, Injectable, LoggerService } from '@nestjs/common';
import type { Level, Logger } from 'pino';
import { ROOT_LOGGER } from './logger';

/**
 * Nest's own lines about wiring itself up: one per module loaded and per route mapped (about 100 at every
 * start, issue 40 item 8), at `debug`, so that what a person needs at `info` is not buried under them.
 */
const ROUTINE = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

/**
 * Nest's LoggerService on pino (app.useLogger): Nest's own lines and every `new Logger(context)`
 * of ours become JSON lines, with `context`. A line about a request names it with a `reqId` field
 * of its message object (requestIdOf): no async context carries it (request-observer.ts).
 * Nest calls `error(message, stack?, context?)` and the others `(message, context?)`; a message
 * may be an object of fields (with `msg`), or an Error.
 */
@Injectable()
export class PinoNestLogger implements LoggerService {
  constructor(@Inject(ROOT_LOGGER) private readonly root: Logger) {}

  log(message: unknown, ...params: unknown[]): void {
    this.write(ROUTINE.has(String(params[params.length - 1])) ? 'debug' : 'info', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: Level, message: unknown, params: unknown[]): void {
    const logger = this.root;
    if (!logger.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = {};
    const rest = [...params];
    if (rest.length > 0 && typeof rest[rest.length - 1] === 'string') fields.context = rest.pop();
    if (level === 'error' && typeof rest[0] === 'string') fields.stack = rest.shift();
    let msg: string;
    if (message instanceof Error) {
      fields.err = message;
      msg = message.message;
    } else if (typeof message === 'object' && message !== null) {
      const { msg: text, ...own } = message as Record<string, unknown>;
      Object.assign(fields, own);
      msg = typeof text === 'string' ? text : '';
    } else {
      msg = String(message);
    }
    logger[level](fields, msg);
  }
}
