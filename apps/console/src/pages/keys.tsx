import { useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { useLocation } from '../router';
import type { Key, Me, NewKey, Page as ApiPage, RotateKeyBody, Scope } from '../types';
import { Busy, CardTable, type Column, ErrorText, Page, Sentence, Time, useLoad } from '../ui';
import { KeyConfirm, KeySecretPanel, type PendingKey, type ShownKey } from './key-panels';
import { oldKeyText, stopsAt } from './key-text';

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
  const [shown, setShown] = useState<ShownKey | null>(null);
  const [pending, setPending] = useState<PendingKey | null>(null);
  const [done, setDone] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const status = useRef<HTMLParagraphElement>(null);
  /** Runs one change, then says what it did (its answer) or why the service refused it. */
  const act = async (work: () => Promise<string>): Promise<boolean> => {
    setError(null);
    setDone('');
    setBusy(true);
    try {
      setDone(await work());
      keys.reload();
      return true;
    } catch (e) {
      setError(e);
      return false;
    } finally {
      setBusy(false);
    }
  };
  /** A confirmed change: its button may be gone afterwards (a revoked key has none), so the focus goes to what it did. */
  const confirmed = (work: () => Promise<string>) =>
    void act(work).then((ok) => {
      if (!ok) return;
      setPending(null);
      status.current?.focus();
    });
  const revoke = (key: Key) =>
    confirmed(async () => {
      await api.send('DELETE', `${base}/${encodeURIComponent(key.id)}`);
      // Its secret, if still on screen, is of no use any more.
      setShown((s) => (s?.key.id === key.id ? null : s));
      return `Key ${key.name} (prefix ${key.prefix}) revoked: requests with it are refused within 5 seconds.`;
    });
  const rotate = (key: Key, overlapSeconds: number) =>
    confirmed(async () => {
      const body: RotateKeyBody = { overlapSeconds };
      const made = (await api.send<{ data: NewKey }>('POST', `${base}/${encodeURIComponent(key.id)}/rotate`, body))
        .data;
      const madeAt = new Date(made.createdAt);
      const old = oldKeyText(key.prefix, stopsAt(overlapSeconds, madeAt, key.expiresAt), madeAt);
      setShown({ key: made, replaced: old });
      return `Key ${key.name} rotated. ${old}`;
    });
  const offered = SCOPES.filter((s) => s !== 'operator' || me?.scopes.includes('operator'));
  const columns: Column<Key>[] = [
    { header: 'Name', class: 'lead', cell: (key) => key.name },
    { header: 'Prefix', class: 'mono', cell: (key) => `${key.prefix}…` },
    { header: 'Scopes', cell: (key) => key.scopes.join(', ') },
    { header: 'Created', class: 'mono', cell: (key) => <Time iso={key.createdAt} /> },
    { header: 'Expires', class: 'mono', cell: (key) => <Time iso={key.expiresAt} none="never" /> },
    { header: 'Last used', class: 'mono', cell: (key) => <Time iso={key.lastUsedAt} none="never" /> },
    {
      header: 'State',
      cell: (key) =>
        key.revokedAt ? (
          <>
            revoked <Time iso={key.revokedAt} />
          </>
        ) : (
          <>
            {key.expiresAt !== null && Date.parse(key.expiresAt) <= Date.now() ? 'expired' : 'active'}
            <span class="actions">
              <button
                type="button"
                class="danger"
                aria-label={`Revoke ${key.name} (${key.prefix})…`}
                disabled={busy}
                onClick={() => setPending({ action: 'revoke', key })}
              >
                Revoke…
              </button>
              <button
                type="button"
                class="danger"
                aria-label={`Rotate ${key.name} (${key.prefix})…`}
                disabled={busy}
                onClick={() => setPending({ action: 'rotate', key })}
              >
                Rotate…
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
            const made = (await api.send<{ data: NewKey }>('POST', base, { name: name.trim(), scopes })).data;
            setShown({ key: made });
            setName('');
            return '';
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
      {shown && <KeySecretPanel shown={shown} />}
      <p role="status" tabIndex={-1} ref={status}>
        <Sentence text={done} />
      </p>
      <ErrorText error={error ?? keys.error} />
      {pending && (
        <KeyConfirm
          pending={pending}
          me={me}
          busy={busy}
          onRevoke={() => revoke(pending.key)}
          onRotate={(overlap) => rotate(pending.key, overlap)}
          onCancel={() => setPending(null)}
        />
      )}
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
