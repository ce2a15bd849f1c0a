import { createHash } from 'node:crypto';
import { docsCsp } from './docs-csp';

const source = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
const styleSrc = (policy: string) =>
  policy
    .split('; ')
    .find((d) => d.startsWith('style-src '))!
    .split(' ')
    .slice(1);

describe('docsCsp', () => {
  it('allows each inline <style> element and style attribute of the page by the hash of its exact text, nothing else inline', () => {
    const html =
      '<head><style>\n  body { margin: 0 }\n</style></head><body><svg style="position:absolute;width:0"></svg>' +
      '<style type="text/css">.a { color: red }</style><div style="position:absolute;width:0"></div></body>';
    expect(styleSrc(docsCsp(html))).toEqual([
      "'self'",
      "'unsafe-hashes'",
      source('\n  body { margin: 0 }\n'),
      source('.a { color: red }'),
      source('position:absolute;width:0'),
    ]);
  });

  it('without inline styles: this origin only, no unsafe-hashes; no inline script, no framing, no other origin', () => {
    const policy = docsCsp('<html><script src="./swagger-ui-bundle.js"></script></html>');
    expect(styleSrc(policy)).toEqual(["'self'"]);
    expect(policy).toContain("script-src 'self';");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
  });
});
