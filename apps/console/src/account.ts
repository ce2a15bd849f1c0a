/*
 * The account a page reads (issue 40 item 3). An operator key belongs to `system`; it reads another
 * account by naming `accountId` on the read routes (docs/contract.md §12, each read recorded in that
 * account's `_audit` as `operator.read`). The console keeps the account in the page's URL as
 * `?account=` (as Keys and Streams always did), so a reload or a shared link reads the same account;
 * the navigation keeps it from page to page, and api.ts names it on every read route.
 */

/** The account named in the current URL, if any. */
export function pageAccount(): string | undefined {
  return new URLSearchParams(location.search).get('account') ?? undefined;
}

/**
 * The read routes that take `accountId` from an operator key (docs/contract.md §12): the events (list,
 * search, export, stream, one event, its verify and proof), the chains (list, status, verify,
 * checkpoints), the statistics, and the erasures' list.
 */
const READ_ROUTES =
  /^\/v1\/(events(\/.*)?|chains|chain\/[^/]+\/(status|verify|checkpoint(\/witnessed)?|consistency)|stats\/events|erasures)$/;

/** Whether a GET of this path reads an account, and so takes the page's `accountId`. */
export function readsAccount(method: string, path: string): boolean {
  return method === 'GET' && READ_ROUTES.test(path);
}
