import { erasedFields, StoredSecrets } from '@app/hashing';

/**
 * The erased fields of a stored event that the database's erasure record does not explain
 * (docs/contract.md §17): each path the event keeps a commitment for (its value gone) must be in
 * `recorded`, the paths the database's own trigger recorded for that event (erasure_events), whoever
 * erased it. `recorded` undefined: no record to hold it against (an export, offline): nothing to say.
 */
export function unrecordedErasures(
  erasure: StoredSecrets['erasure'],
  recorded: readonly string[] | null | undefined,
): string[] {
  if (erasure === null || recorded === undefined) return [];
  const paths = erasedFields({ version: 2, salts: erasure.salts, commitments: erasure.commitments });
  return paths.filter((path) => !(recorded ?? []).includes(path));
}

/** The error for `paths` of the event at `position`, erased outside the erasure's path. */
export function erasureRecordFailure(position: number, paths: readonly string[]): string {
  return `the event at position ${position} has ${paths.join(', ')} erased, but the database's erasure record records no erasure of ${paths.length === 1 ? 'it' : 'them'}: erased outside the erasure's path`;
}
