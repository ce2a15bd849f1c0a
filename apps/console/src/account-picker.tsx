import { api } from './api';
import { navigate, useLocation } from './router';
import type { Account, Me, Page as ApiPage } from './types';
import { useLoad } from './ui';

/**
 * An operator's choice of the account every page reads (issue 40 item 3; account.ts): its own
 * (`system`) or any other, by name. The choice is the URL's `?account=`, so it survives a reload;
 * each read of another account is recorded in that account's `_audit` as `operator.read`.
 */
export function AccountPicker({ me }: { me: Me }) {
  const { path, query } = useLocation();
  const accounts = useLoad((signal) => api.get<ApiPage<Account>>('/v1/accounts', { limit: 100 }, signal), []);
  const chosen = query.get('account') ?? me.accountId;
  const listed = accounts.value?.data ?? [];
  // An account named in the URL but not among the first hundred is still offered, by its id.
  const options = listed.some((a) => a.id === chosen) ? listed : [{ id: chosen, name: chosen }, ...listed];
  const choose = (id: string) => {
    const next = new URLSearchParams(query);
    if (id === me.accountId) next.delete('account');
    else next.set('account', id);
    // Filters and cursors belong to the account they were made in: only the search is kept.
    for (const name of ['cursor']) next.delete(name);
    const section = path.split('/')[1] ?? 'events';
    // An event's page is of one account: another account starts at its events.
    const to = path.split('/').length > 2 ? '/events' : `/${section || 'events'}`;
    const text = next.toString();
    navigate(`/console${to}${text ? `?${text}` : ''}`);
  };
  return (
    <label class="account-picker">
      <span>Account</span>{' '}
      <select value={chosen} onChange={(e) => choose(e.currentTarget.value)}>
        {options.map((a) => (
          <option key={a.id} value={a.id}>
            {a.id === me.accountId ? `${a.name} (this key’s)` : a.name}
          </option>
        ))}
      </select>
    </label>
  );
}
