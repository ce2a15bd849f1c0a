import { api } from '../api';
import type { Erasure, Event, Page } from '../types';
import { Time } from '../ui';

/*
 * Which erasure removed a field of an event (issue 40 item 5). GET /v1/erasures lists every erasure,
 * the ones made by hand included (docs/contract.md §17), with its fields but not its events; an
 * erasure made before the event was stored cannot have erased it. So the erasures after the event
 * whose fields cover the path are the candidates, and when there is one it is the one.
 */

/** How many pages of erasures are read back, newest first, looking for those after the event. */
const MAX_PAGES = 5;

/** The account's erasures made since the event was stored (an operator names its own account unless the page reads another). */
export async function erasuresOf(event: Event, accountId: string | undefined, signal: AbortSignal): Promise<Erasure[]> {
  const since = Date.parse(event.createdAt);
  const found: Erasure[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await api.get<Page<Erasure>>('/v1/erasures', { limit: 100, cursor, accountId }, signal);
    for (const erasure of answer.data) if (Date.parse(erasure.at) >= since) found.push(erasure);
    const last = answer.data[answer.data.length - 1];
    if (!answer.nextCursor || !last || Date.parse(last.at) < since) break;
    cursor = answer.nextCursor;
  }
  return found;
}

/** Whether an erasure's fields cover a path: itself, or `context.*` for any context member. */
export function covers(erasure: Erasure, path: string): boolean {
  return erasure.fields.includes(path) || (path.startsWith('context.') && erasure.fields.includes('context.*'));
}

/** The words after an erased field's mark: by which erasure, when and why (or the few it may have been). */
export function erasedBy(path: string, erasures: Erasure[]) {
  const candidates = erasures.filter((e) => covers(e, path));
  if (candidates.length === 0) return undefined;
  if (candidates.length === 1) {
    const [e] = candidates as [Erasure];
    return (
      <>
        by <span class="mono">{e.id}</span> at <Time iso={e.at} />
        {e.reason === null ? (
          ' (made by hand, no reason recorded)'
        ) : (
          <>
            : “<bdi>{e.reason}</bdi>”
          </>
        )}
      </>
    );
  }
  return (
    <>
      by one of {candidates.length} erasures:{' '}
      {candidates.map((e, i) => (
        <span key={e.id}>
          {i > 0 && '; '}
          <span class="mono">{e.id}</span> at <Time iso={e.at} />
          {e.reason !== null && (
            <>
              {' '}
              (“<bdi>{e.reason}</bdi>”)
            </>
          )}
        </span>
      ))}
    </>
  );
}
