import { useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { useLocation } from '../router';
import {
  isOperator,
  type EraseBody,
  type Erasure,
  type ErasureDryRun,
  type ErasureResult,
  type Me,
  type Page as ApiPage,
} from '../types';
import { Busy, CardTable, type Column, Confirm, ErrorText, Page, Time, useLoad } from '../ui';

const COLUMNS: Column<Erasure>[] = [
  { header: 'Id', class: 'mono lead', cell: (e) => e.id },
  { header: 'When', class: 'mono', cell: (e) => <Time iso={e.at} /> },
  { header: 'Events', cell: (e) => e.events },
  { header: 'Fields', class: 'mono', cell: (e) => e.fields.join(', ') },
  { header: 'Reason', cell: (e) => e.reason ?? '(made by hand: no reason recorded)' },
  { header: 'By key', class: 'mono', cell: (e) => e.keyId ?? 'the database function, by hand' },
];

/** The fields an erasure may take (docs/contract.md §17), as the form offers them. */
const FIELDS = [
  ['actor', 'Actor'],
  ['resource', 'Resource'],
  ['context.*', 'Every context member'],
] as const;

/** A question asked of the service before erasing: what the dry run counted, for this query and these fields. */
interface Counted {
  body: EraseBody;
  dryRun: ErasureDryRun;
}

/**
 * Erasures (docs/contract.md §17; issue 40 item 5), for `admin` keys of their account and `operator` keys
 * of the account chosen in the header: the past erasures, and a new one in three steps: the query and
 * fields, a dry run that counts the matching events (nothing erased), then the reason and a typed
 * confirmation (the number of events) before anything is erased.
 */
export function ErasuresPage({ me }: { me: Me | null }) {
  const { query } = useLocation();
  const account = query.get('account') ?? undefined;
  // An operator names the account it erases in, its own (`system`) unless the header chose another.
  const accountId = isOperator(me) ? (account ?? me?.accountId) : undefined;
  const [cursor, setCursor] = useState<string | undefined>();
  const list = useLoad(
    (signal) => api.get<ApiPage<Erasure>>('/v1/erasures', { limit: 50, cursor, accountId }, signal),
    [cursor, accountId],
  );
  const [q, setQ] = useState('');
  const [fields, setFields] = useState<string[]>([]);
  const [members, setMembers] = useState('');
  const [counted, setCounted] = useState<Counted | null>(null);
  const [reason, setReason] = useState('');
  const [typed, setTyped] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState('');
  const status = useRef<HTMLParagraphElement>(null);

  const asked = (): string[] => [
    ...fields,
    ...members
      .split(',')
      .map((m) => m.trim())
      .filter((m) => m !== '')
      .map((m) => `context.${m}`),
  ];
  const count = async () => {
    setError(null);
    setDone('');
    setCounted(null);
    const paths = asked();
    if (q.trim() === '') return setError('Enter the search that finds the events to erase.');
    if (paths.length === 0) return setError('Choose at least one field to erase.');
    // The reason is asked after the count (it is recorded only with the erasure; a dry run records nothing).
    const body: EraseBody = { q: q.trim(), fields: paths, reason: 'dry run', accountId, allowPartial: true };
    setBusy(true);
    try {
      const answer = await api.send<{ data: ErasureDryRun }>('POST', '/v1/erasures', { ...body, dryRun: true });
      setCounted({ body, dryRun: answer.data });
      setReason('');
      setTyped('');
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const erase = async () => {
    if (!counted) return;
    const why = reason.trim();
    if (why === '') return setError('Say why these fields are erased: the reason is recorded with the erasure.');
    if (typed.trim() !== String(counted.dryRun.events))
      return setError(`Type ${counted.dryRun.events}, the number of events, to confirm.`);
    setBusy(true);
    setError(null);
    try {
      // The count confirmed binds (expectEvents): an event appended or erased since is a 409, nothing erased.
      const body: EraseBody = {
        ...counted.body,
        reason: why,
        allowPartial: counted.dryRun.skipped > 0,
        expectEvents: counted.dryRun.events,
      };
      const result = (await api.send<{ data: ErasureResult }>('POST', '/v1/erasures', body)).data;
      setDone(
        `Erasure ${result.id} done: ${result.fields.join(', ')} erased in ${result.events} event(s)` +
          (result.skipped > 0 ? `; ${result.skipped} on version-1 chains left as they were.` : '.'),
      );
      setCounted(null);
      setQ('');
      setFields([]);
      setMembers('');
      list.reload();
      status.current?.focus();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const n = counted?.dryRun.events ?? 0;
  return (
    <Page title={account ? `Erasures of ${account}` : 'Erasures'}>
      <p>
        An erasure deletes the chosen fields of every matching event (GDPR Art. 17) and keeps their commitments, so
        every hash, proof and checkpoint still verifies. It cannot be undone.
      </p>
      <form
        class="search"
        aria-labelledby="new-erasure"
        onSubmit={(e) => {
          e.preventDefault();
          void count();
        }}
      >
        <h2 id="new-erasure" class="form-title">
          New erasure
        </h2>
        <div class="field grow">
          <label for="erase-q">Events matching</label>
          <input
            id="erase-q"
            type="search"
            value={q}
            maxLength={2000}
            spellcheck={false}
            placeholder="actor:alice@example.com"
            onInput={(e) => {
              setQ(e.currentTarget.value);
              setCounted(null);
            }}
          />
        </div>
        <fieldset class="scopes">
          <legend>Fields to erase</legend>
          {FIELDS.map(([path, label]) => (
            <label key={path}>
              <input
                type="checkbox"
                checked={fields.includes(path)}
                onChange={(e) => {
                  setFields(e.currentTarget.checked ? [...fields, path] : fields.filter((f) => f !== path));
                  setCounted(null);
                }}
              />{' '}
              {label}
            </label>
          ))}
        </fieldset>
        <div class="field">
          <label for="erase-members">Context members (comma-separated)</label>
          <input
            id="erase-members"
            value={members}
            maxLength={500}
            spellcheck={false}
            placeholder="email, ip"
            onInput={(e) => {
              setMembers(e.currentTarget.value);
              setCounted(null);
            }}
          />
        </div>
        <button type="submit" aria-disabled={busy}>
          Count matching events
        </button>
      </form>
      <p role="status" tabIndex={-1} ref={status}>
        {done}
      </p>
      {!(counted && n > 0) && <ErrorText error={error} />}
      {counted && n === 0 && (
        <p role="status">
          No event would be erased
          {counted.dryRun.skipped > 0 &&
            `: the ${counted.dryRun.skipped} matching are on version-1 chains, which cannot be erased`}
          .
        </p>
      )}
      {counted && n > 0 && (
        <Confirm
          title={`Erase ${counted.body.fields.join(', ')} in ${n === 1 ? '1 event' : `${n} events`}?`}
          action={`Yes, erase in ${n === 1 ? '1 event' : `${n} events`}`}
          busy={busy}
          onConfirm={() => void erase()}
          onCancel={() => {
            setCounted(null);
            setError(null);
          }}
          words={
            <>
              <p>
                The dry run found <strong>{n === 1 ? '1 event' : `${n} events`}</strong> matching{' '}
                <code class="mono">{counted.body.q}</code>
                {counted.dryRun.skipped > 0 &&
                  ` (and ${counted.dryRun.skipped} on version-1 chains, which cannot be erased and are left as they are)`}
                . Their values of these fields are deleted for good; nothing else changes.
              </p>
            </>
          }
        >
          <div class="field">
            <label for="erase-reason">Reason (recorded with the erasure)</label>
            <input
              id="erase-reason"
              value={reason}
              required
              maxLength={512}
              onInput={(e) => {
                setReason(e.currentTarget.value);
                setError(null);
              }}
            />
          </div>
          <div class="field">
            <label for="erase-typed">Type {n} to confirm</label>
            <input
              id="erase-typed"
              inputMode="numeric"
              autoComplete="off"
              value={typed}
              required
              onInput={(e) => {
                setTyped(e.currentTarget.value);
                setError(null);
              }}
            />
          </div>
          <ErrorText error={error} />
        </Confirm>
      )}
      <h2>Past erasures</h2>
      <ErrorText error={list.error} />
      {list.loading && <Busy label="Loading erasures" />}
      {list.value && list.value.data.length === 0 && <p>No erasure in this account.</p>}
      {list.value && list.value.data.length > 0 && (
        <CardTable caption="Erasures, newest first" columns={COLUMNS} rows={list.value.data} rowKey={(e) => e.id} />
      )}
      {list.value?.nextCursor && (
        <button type="button" onClick={() => setCursor(list.value!.nextCursor)}>
          Next page
        </button>
      )}
    </Page>
  );
}
