import { MAX_ACTION_LENGTH } from '@app/common';

/** The suffix that makes an action pattern a prefix: `invoice.*` applies to `invoice.approve`, `invoice.line.add`. */
export const PREFIX_SUFFIX = '.*';

/**
 * What is wrong with `pattern` as a schema's action (docs/contract.md §19), or null: an action name
 * (1–256 characters, as an event's `action`), or a non-empty prefix ending in `.*`.
 */
export function actionPatternProblem(pattern: string): string | null {
  const length = [...pattern].length;
  if (length === 0 || length > MAX_ACTION_LENGTH) return `action must be 1 to ${MAX_ACTION_LENGTH} characters`;
  if (pattern === PREFIX_SUFFIX) return 'action must be an action name or a prefix ending in .* (such as invoice.*)';
  return null;
}

/** Whether `pattern` applies to the event action `action`. */
export function patternMatches(pattern: string, action: string): boolean {
  return pattern.endsWith(PREFIX_SUFFIX) ? action.startsWith(pattern.slice(0, -1)) : action === pattern;
}

/**
 * Values by action pattern, and the one that applies to an action: the action's own, else the
 * longest prefix pattern that matches it (`invoice.approve.*` before `invoice.*`). A lookup costs one
 * map probe per `.` in the action, whatever the number of patterns.
 */
export class ActionPatterns<T> {
  private readonly byPattern: ReadonlyMap<string, T>;

  constructor(entries: Iterable<readonly [string, T]>) {
    this.byPattern = new Map(entries);
  }

  get size(): number {
    return this.byPattern.size;
  }

  /** The pattern that applies to `action` and its value, or null when none does. */
  match(action: string): { pattern: string; value: T } | null {
    if (this.byPattern.size === 0) return null;
    const own = this.byPattern.get(action);
    if (own !== undefined) return { pattern: action, value: own };
    for (let dot = action.lastIndexOf('.'); dot > 0; dot = action.lastIndexOf('.', dot - 1)) {
      const pattern = `${action.slice(0, dot)}${PREFIX_SUFFIX}`;
      const value = this.byPattern.get(pattern);
      if (value !== undefined) return { pattern, value };
    }
    return null;
  }
}
