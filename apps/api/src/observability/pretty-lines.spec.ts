import { prettyLine } from './pretty-lines';

describe('prettyLine (LOG_FORMAT=pretty)', () => {
  it('writes time, level, context, message and the other fields on one line', () => {
    const line = JSON.stringify({
      time: '2026-11-26T10:01:02.345Z',
      level: 'info',
      msg: 'request completed',
      reqId: 'r-1',
      status: 201,
    });
    expect(prettyLine(line)).toBe('10:01:02.345 INFO  request completed reqId=r-1 status=201\n');
  });

  it('puts an error’s stack under its line', () => {
    const line = JSON.stringify({
      time: '2026-11-26T10:01:02.345Z',
      level: 'error',
      context: 'Errors',
      msg: 'GET /v1/events failed',
      err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at here' },
    });
    expect(prettyLine(line)).toBe('10:01:02.345 ERROR [Errors] GET /v1/events failed\nError: boom\n    at here\n');
  });
});
