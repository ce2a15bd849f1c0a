import type { Schema, SchemaMode, SchemaPreview } from '../types';

/*
 * How the Schemas page says things (docs/contract.md §19). Plain strings only: a schema is an
 * account's input, shown as JSON text (Preact escapes it), never as HTML.
 */

/** Each mode, and a deletion, in words after a mark of its own shape: colour only repeats them. */
export const MODES: Record<SchemaMode | 'deleted', { mark: string; words: string; means: string }> = {
  enforce: { mark: '■', words: 'enforce', means: 'an event that does not match is refused (400)' },
  warn: { mark: '△', words: 'warn', means: 'an event that does not match is stored and counted' },
  deleted: { mark: '✕', words: 'deleted', means: 'no schema: appends of this action are not checked' },
};

/** A version's state: its mode, or `deleted` for the version a DELETE made (schema null). */
export function stateOf(version: Pick<Schema, 'mode' | 'schema'>): SchemaMode | 'deleted' {
  return version.schema === null ? 'deleted' : version.mode;
}

/** A schema as the page shows it: JSON indented by two spaces, one member per line; a deletion says so. */
export function formatSchema(schema: Schema['schema']): string {
  return schema === null ? '(deleted: no schema)' : JSON.stringify(schema, null, 2);
}

/** What the editor's text is: a JSON object, or the words saying why not. */
export function parseSchema(text: string): { schema: Record<string, unknown> } | { problem: string } {
  if (text.trim() === '') return { problem: 'Write the schema first: a JSON object (JSON Schema 2020-12).' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problem: `The schema is not JSON: ${error instanceof Error ? error.message : String(error)}.` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { problem: 'The schema must be a JSON object (a JSON Schema 2020-12), not an array or a single value.' };
  return { schema: value as Record<string, unknown> };
}

/** "This version would reject 3 of the last 10 events of invoice.approve." */
export function previewSentence(action: string, preview: Pick<SchemaPreview, 'checked' | 'rejected'>): string {
  const { checked, rejected } = preview;
  if (checked === 0) return `No event of ${action} yet: this version rejects none so far.`;
  const events = checked === 1 ? 'the last event' : `the last ${checked} events`;
  return `This version would reject ${rejected} of ${events} of ${action}.`;
}

/** A line of a side-by-side comparison: kept on both sides, only on the left (removed), or only on the right (added). */
export interface DiffLine {
  kind: 'same' | 'removed' | 'added';
  text: string;
}

/** Past this many cells (lines × lines) of the differing middle, its lines are all shown as changed. */
const MAX_DIFF_CELLS = 4_000_000;

/**
 * The line differences from `left` to `right` (a longest common subsequence of lines, after the
 * common head and tail): each line of both once, in order, removals before additions where they
 * meet. Two schemas of 64 KiB stay under MAX_DIFF_CELLS in practice; beyond it, the middle is
 * shown as removed then added, which is still true, only less precise.
 */
export function diffLines(left: readonly string[], right: readonly string[]): DiffLine[] {
  let head = 0;
  while (head < left.length && head < right.length && left[head] === right[head]) head++;
  let tail = 0;
  while (
    tail < left.length - head &&
    tail < right.length - head &&
    left[left.length - 1 - tail] === right[right.length - 1 - tail]
  )
    tail++;
  const a = left.slice(head, left.length - tail);
  const b = right.slice(head, right.length - tail);
  const same = (text: string): DiffLine => ({ kind: 'same', text });
  const middle: DiffLine[] = [];
  if ((a.length + 1) * (b.length + 1) > MAX_DIFF_CELLS) {
    middle.push(...a.map((text): DiffLine => ({ kind: 'removed', text })));
    middle.push(...b.map((text): DiffLine => ({ kind: 'added', text })));
  } else {
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..], in one flat array.
    const width = b.length + 1;
    const lcs = new Uint32Array((a.length + 1) * width);
    for (let i = a.length - 1; i >= 0; i--)
      for (let j = b.length - 1; j >= 0; j--)
        lcs[i * width + j] =
          a[i] === b[j]
            ? lcs[(i + 1) * width + j + 1]! + 1
            : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
    let i = 0;
    let j = 0;
    while (i < a.length || j < b.length) {
      if (i < a.length && j < b.length && a[i] === b[j]) {
        middle.push(same(a[i]!));
        i++;
        j++;
      } else if (j >= b.length || (i < a.length && lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!)) {
        middle.push({ kind: 'removed', text: a[i]! });
        i++;
      } else {
        middle.push({ kind: 'added', text: b[j]! });
        j++;
      }
    }
  }
  return [...left.slice(0, head).map(same), ...middle, ...right.slice(right.length - tail).map(same)];
}

/** How many lines a comparison removes and adds, in words. */
export function diffSummary(lines: readonly DiffLine[]): string {
  const removed = lines.filter((l) => l.kind === 'removed').length;
  const added = lines.filter((l) => l.kind === 'added').length;
  if (removed === 0 && added === 0) return 'The two versions’ schemas are the same.';
  const count = (n: number, what: string) => `${n} line${n === 1 ? '' : 's'} ${what}`;
  return `${count(removed, 'removed')} (marked −), ${count(added, 'added')} (marked +).`;
}
