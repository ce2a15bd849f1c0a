import { EventEmitter } from 'node:events';
import type { NextFunction, Request, Response } from 'express';
import { pino } from 'pino';
import { levelOf, observeRequests } from './request-observer';

describe('levelOf (the level of a request line)', () => {
  it.each([
    [200, false, 'info'],
    [404, false, 'info'],
    [429, true, 'info'],
    [500, false, 'error'],
    [500, true, 'error'],
    [502, true, 'error'],
    [503, false, 'warn'],
    [503, true, 'info'],
  ] as const)('status %i while stopping=%s: %s', (status, stopping, level) => {
    expect(levelOf(status, () => stopping)).toBe(level);
  });
});

describe('observeRequests', () => {
  /** One request through the middleware, answered with `status`: the line it wrote. */
  function lineOf(status: number, stopping: boolean): Record<string, unknown> {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const sut = observeRequests(logger, null, () => stopping);
    const res = Object.assign(new EventEmitter(), {
      statusCode: status,
      writableFinished: true,
    }) as unknown as Response;
    const req = {
      method: 'GET',
      headers: { 'x-request-id': 'r-1' },
      route: { path: '/health/ready' },
    } as unknown as Request;
    (res as unknown as { req: Request }).req = req;
    sut(req, res, (() => undefined) as NextFunction);
    res.emit('close');
    expect(lines).toHaveLength(1);
    return JSON.parse(lines[0]!) as Record<string, unknown>;
  }

  it('logs a 503 of readiness during a stop at info, the same 503 otherwise at warn, a 500 at error', () => {
    expect(lineOf(503, true)).toMatchObject({ level: 30, status: 503, route: '/health/ready' });
    expect(lineOf(503, false)).toMatchObject({ level: 40, status: 503 });
    expect(lineOf(500, true)).toMatchObject({ level: 50, status: 500 });
  });
});
