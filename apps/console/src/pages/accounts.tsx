import { useState } from 'preact/hooks';
import { api } from '../api';
import { href, Link } from '../router';
import type { Account, Me, Page as ApiPage } from '../types';
import { Busy, CardTable, type Column, ErrorText, Page, Time, useLoad } from '../ui';

const accountColumns = (ownId: string | undefined): Column<Account>[] => [
  { header: 'Name', class: 'lead', cell: (a) => a.name },
  { header: 'Id', class: 'mono', cell: (a) => a.id },
  { header: 'Event count', cell: (a) => a.eventCount },
  { header: 'Chains', cell: (a) => a.chainCount },
  { header: 'Last event', class: 'mono', cell: (a) => <Time iso={a.lastEventAt} /> },
  {
    header: 'Events',
    // Read as an operator (account.ts): the key's own account needs no `accountId`.
    cell: (a) => <Link to={href('/events', { account: a.id === ownId ? undefined : a.id })}>Events of {a.name}</Link>,
  },
  {
    header: 'Keys',
    cell: (a) => (
      <Link to={href('/keys', { account: a.id })}>
        {a.keyCount} key(s) of {a.name}
      </Link>
    ),
  },
  { header: 'Streams', cell: (a) => <Link to={href('/streams', { account: a.id })}>Streams of {a.name}</Link> },
];

/**
 * Accounts (docs/contract.md §12), for operator keys: list, create, and each one's events (read as an
 * operator: account.ts), keys and streams (§16).
 */
export function AccountsPage({ me }: { me: Me | null }) {
  const [cursor, setCursor] = useState<string | undefined>();
  const accounts = useLoad(
    (signal) => api.get<ApiPage<Account>>('/v1/accounts', { limit: 100, cursor }, signal),
    [cursor],
  );
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<Account | null>(null);
  return (
    <Page title="Accounts">
      <form
        class="search"
        onSubmit={(e) => {
          e.preventDefault();
          setError(null);
          api.send<{ data: Account }>('POST', '/v1/accounts', { name: name.trim() }).then((answer) => {
            setCreated(answer.data);
            setName('');
            accounts.reload();
          }, setError);
        }}
      >
        <div class="field grow">
          <label for="account-name">Name</label>
          <input
            id="account-name"
            value={name}
            required
            maxLength={64}
            pattern="[A-Za-z0-9._\-]+"
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </div>
        <button type="submit">Create account</button>
      </form>
      {created && <p role="status">Account {created.name} created.</p>}
      <ErrorText error={error ?? accounts.error} />
      {accounts.loading && <Busy label="Loading accounts" />}
      {accounts.value && (
        <CardTable
          caption="Accounts"
          columns={accountColumns(me?.accountId)}
          rows={accounts.value.data}
          rowKey={(a) => a.id}
        />
      )}
      {accounts.value?.nextCursor && (
        <button type="button" onClick={() => setCursor(accounts.value!.nextCursor)}>
          Next page
        </button>
      )}
    </Page>
  );
}
