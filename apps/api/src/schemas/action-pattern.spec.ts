import { ActionPatterns, actionPatternProblem, patternMatches } from './action-pattern';

describe('action patterns (docs/contract.md §19)', () => {
  const patterns = new ActionPatterns([
    ['invoice.*', 'prefix'],
    ['invoice.approve', 'exact'],
    ['invoice.line.*', 'line'],
    ['user.login', 'login'],
  ]);

  it('the action’s own schema wins over every prefix', () => {
    expect(patterns.match('invoice.approve')).toEqual({ pattern: 'invoice.approve', value: 'exact' });
  });

  it('else the longest matching prefix', () => {
    expect(patterns.match('invoice.line.add')).toEqual({ pattern: 'invoice.line.*', value: 'line' });
    expect(patterns.match('invoice.line.tax.set')).toEqual({ pattern: 'invoice.line.*', value: 'line' });
    expect(patterns.match('invoice.reject')).toEqual({ pattern: 'invoice.*', value: 'prefix' });
  });

  it('a prefix matches only after its dot: not the bare name, not a longer word', () => {
    expect(patterns.match('invoice')).toBeNull();
    expect(patterns.match('invoices.approve')).toBeNull();
    expect(patterns.match('user.login.failed')).toBeNull();
    expect(patterns.match('other')).toBeNull();
    expect(new ActionPatterns<string>([]).match('invoice.approve')).toBeNull();
  });

  it('patternMatches agrees with match', () => {
    expect(patternMatches('invoice.*', 'invoice.line.add')).toBe(true);
    expect(patternMatches('invoice.*', 'invoice')).toBe(false);
    expect(patternMatches('invoice.approve', 'invoice.approve')).toBe(true);
    expect(patternMatches('invoice.approve', 'invoice.approved')).toBe(false);
  });

  it('actionPatternProblem: 1–256 characters, not a bare .*', () => {
    expect(actionPatternProblem('invoice.*')).toBeNull();
    expect(actionPatternProblem('a')).toBeNull();
    expect(actionPatternProblem('')).toMatch(/1 to 256/);
    expect(actionPatternProblem('x'.repeat(257))).toMatch(/1 to 256/);
    expect(actionPatternProblem('.*')).toMatch(/prefix/);
  });
});
