/** A page of a list route (docs/contract.md §4): its items, and a cursor while more exist. */
export interface Page<T> {
  data: T[];
  nextCursor?: string;
}

/**
 * Every item of a paged list, page after page, following nextCursor with the same filters
 * (the service pages without repeating or skipping, §4); the next page is asked for only when
 * the caller has taken every item of this one.
 */
export async function* everyItem<T>(page: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<T> {
  let cursor: string | undefined;
  do {
    const answer = await page(cursor);
    yield* answer.data;
    cursor = answer.nextCursor;
  } while (cursor !== undefined);
}
