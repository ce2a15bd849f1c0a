import { printable, printableLines } from './io';

describe('printable', () => {
  it('writes control and invisible characters as escapes, and leaves other text alone', () => {
    expect(printable('default\u001b[8m hidden')).toBe('default\\u001b[8m hidden');
    expect(printable('a\nRESULT: VERIFIED\r\t\u0000\u007f\u009b')).toBe(
      'a\\u000aRESULT: VERIFIED\\u000d\\u0009\\u0000\\u007f\\u009b',
    );
    expect(printable('\u202eevil\u2066\u200b\u2028\u{e0041}')).toBe('\\u202eevil\\u2066\\u200b\\u2028\\u{e0041}');
    expect(printable('lone \ud800 surrogate')).toBe('lone \\ud800 surrogate');
    expect(printable('café 😀 — “ok” 日本')).toBe('café 😀 — “ok” 日本');
  });

  it('joins lines so that only its own newlines separate them', () => {
    expect(printableLines(['one', 'two\nthree'])).toBe('one\ntwo\\u000athree\n');
  });
});
