import { useState } from 'preact/hooks';
import { api } from '../api';
import { useLocation } from '../router';
import type { Key, Me, NewKey, Page as ApiPage, Scope } from '../types';
import { Busy, CardTable, type Column, ErrorText, Page, useLoad } from '../ui';

const SCOPES: Scope[] = ['ingest', 'read', 'admin', 'operator'];

/** Keys of an account (docs/contract.md §12): the key's own, or `?account=` for an operator. */
export function KeysPage({ me }: { me: Me | null }) {
  const { query } = useLocation();
  const accountId = query.get('account') ?? me?.accountId;
  if (!accountId) return <Page title="Keys">{<p>This service does not say which account the key belongs to.</p>}</Page>;
  return <KeysOf accountId={accountId} me={me} />;
}

function KeysOf({ accountId, me }: { accountId: string; me: Me | null }) {
  const base = `/v1/accounts/${encodeURIComponent(accountId)}/keys`;
  const [cursor, setCursor] = useState<string | undefined>();
  const keys = useLoad((signal) => api.get<ApiPage<Key>>(base, { limit: 100, cursor }, signal), [base, cursor]);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['ingest', 'read']);
  const [created, setCreated] = useState<NewKey | null>(null);
  const [copied, setCopied] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const act = async (work: () => Promise<void>) => {
    setError(null);
    setBusy(true);
    try {
      await work();
      keys.reload();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const offered = SCOPES.filter((s) => s !== 'operator' || me?.scopes.includes('operator'));
  const columns: Column<Key>[] = [
    { header: 'Name', class: 'lead', cell: (key) => key.name },
    { header: 'Prefix', class: 'mono', cell: (key) => `${key.prefix}…` },
    { header: 'Scopes', cell: (key) => key.scopes.join(', ') },
    { header: 'Created', class: 'mono', cell: (key) => key.createdAt },
    { header: 'Expires', class: 'mono', cell: (key) => key.expiresAt ?? 'never' },
    { header: 'Last used', class: 'mono', cell: (key) => key.lastUsedAt ?? 'never' },
    {
      header: 'State',
      cell: (key) =>
        key.revokedAt ? (
          `revoked ${key.revokedAt}`
        ) : (
          <>
            {key.expiresAt !== null && Date.parse(key.expiresAt) <= Date.now() ? 'expired' : 'active'}
            <span class="actions">
              <button
                type="button"
                aria-label={`Revoke ${key.name} (${key.prefix})`}
                disabled={busy}
                onClick={() => void act(() => api.send('DELETE', `${base}/${key.id}`).then(() => undefined))}
              >
                Revoke
              </button>
              <button
                type="button"
                aria-label={`Rotate ${key.name} (${key.prefix})`}
                disabled={busy}
                onClick={() =>
                  void act(async () => {
                    setCopied('');
                    setCreated((await api.send<{ data: NewKey }>('POST', `${base}/${key.id}/rotate`, {})).data);
                  })
                }
              >
                Rotate
              </button>
            </span>
          </>
        ),
    },
  ];
  return (
    <Page title={me?.accountId === accountId ? 'Keys' : `Keys of ${accountId}`}>
      <form
        class="search"
        onSubmit={(e) => {
          e.preventDefault();
          void act(async () => {
            setCopied('');
            setCreated((await api.send<{ data: NewKey }>('POST', base, { name: name.trim(), scopes })).data);
            setName('');
          });
        }}
      >
        <div class="field grow">
          <label for="key-name">Name</label>
          <input id="key-name" value={name} required maxLength={128} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <fieldset class="scopes">
          <legend>Scopes</legend>
          {offered.map((s) => (
            <label key={s}>
              <input
                type="checkbox"
                checked={scopes.includes(s)}
                onChange={(e) => setScopes(e.currentTarget.checked ? [...scopes, s] : scopes.filter((x) => x !== s))}
              />{' '}
              {s}
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={busy}>
          Create key
        </button>
      </form>
      {created && (
        <div class="secret" role="status">
          <p>
            The secret of <strong>{created.name}</strong> is shown this once; copy it now.
          </p>
          <code class="mono">{created.secret}</code>{' '}
          <button
            type="button"
            onClick={() =>
              void navigator.clipboard.writeText(created.secret).then(
                () => setCopied('Copied.'),
                () => setCopied('Copying was refused by the browser: select the secret and copy it.'),
              )
            }
          >
            Copy
          </button>{' '}
          <span>{copied}</span>
        </div>
      )}
      <ErrorText error={error ?? keys.error} />
      {keys.loading && <Busy label="Loading keys" />}
      {keys.value && (
        <CardTable
          caption={`Keys${cursor ? ' (next page)' : ''}`}
          columns={columns}
          rows={keys.value.data}
          rowKey={(key) => key.id}
        />
      )}
      {keys.value?.nextCursor && (
        <button type="button" onClick={() => setCursor(keys.value!.nextCursor)}>
          Next page
        </button>
      )}
    </Page>
  );
}
