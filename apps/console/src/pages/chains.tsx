import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { pageAccount } from '../account';
import { href, Link, useLocation } from '../router';
import {
  mayManage,
  type Chain,
  type ChainsPage as ChainsAnswer,
  type ChainsQuery,
  type ChainVerification,
  type LegalHoldBody,
  type Me,
  type RetentionBody,
} from '../types';
import { Busy, ErrorText, Page, Time } from '../ui';

/**
 * Chains (docs/contract.md §15): status, Verify, the latest checkpoint; retention and legal hold (§14), set
 * by admin keys on their account's chains, and by operator keys on the chains of the account chosen in
 * the header (account-picker.tsx).
 */
export function ChainsPage({ me }: { me: Me | null }) {
  const manage = mayManage(me);
  const [chains, setChains] = useState<Chain[]>([]);
  const [cursor, setCursor] = useState<string | undefined>();
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const load = async (from?: string) => {
    setLoading(true);
    setError(null);
    try {
      const page = await api.get<ChainsAnswer>('/v1/chains', { limit: 50, cursor: from } satisfies ChainsQuery);
      setChains((shown) => (from === undefined ? page.data : [...shown, ...page.data]));
      setCursor(page.nextCursor);
    } catch (e) {
      setError(e);
    } finally {
      setLoading(false);
    }
  };
  const { query } = useLocation();
  const account = query.get('account');
  useEffect(() => void load(), [account]);
  return (
    <Page title="Chains">
      <ErrorText error={error} />
      <ul class="cards">
        {chains.map((chain) => (
          <li key={chain.id}>
            <ChainCard chain={chain} manage={manage} />
          </li>
        ))}
      </ul>
      {loading && <Busy label="Loading chains" />}
      {!loading && chains.length === 0 && !error && <p>No chains yet.</p>}
      {cursor && !loading && (
        <button type="button" onClick={() => void load(cursor)}>
          Load more
        </button>
      )}
    </Page>
  );
}

function ChainCard({ chain: listed, manage }: { chain: Chain; manage: boolean }) {
  // A change answers the chain's new status: the card shows it without reloading the list.
  const [chain, setChain] = useState(listed);
  useEffect(() => setChain(listed), [listed]);
  const [verifying, setVerifying] = useState(false);
  const [result, setResult] = useState<ChainVerification | null>(null);
  const [checkpoint, setCheckpoint] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const verify = async () => {
    setVerifying(true);
    setResult(null);
    setError(null);
    try {
      setResult((await api.get<{ data: ChainVerification }>(`/v1/chain/${chain.id}/verify`)).data);
    } catch (e) {
      setError(e);
    } finally {
      setVerifying(false);
    }
  };
  const showCheckpoint = async () => {
    setError(null);
    try {
      setCheckpoint(await api.text(`/v1/chain/${chain.id}/checkpoint`));
    } catch (e) {
      setError(e);
    }
  };
  const headingId = `chain-${chain.id}`;
  return (
    <section aria-labelledby={headingId}>
      <h2 id={headingId}>{chain.name}</h2>
      <dl class="fields">
        <div>
          <dt>Id</dt>
          <dd class="mono">{chain.id}</dd>
        </div>
        <div>
          <dt>Events</dt>
          <dd>{chain.eventCount}</dd>
        </div>
        <div>
          <dt>Last position</dt>
          <dd>{chain.lastPosition}</dd>
        </div>
        <div>
          <dt>Last hash</dt>
          <dd class="mono">{chain.lastHash}</dd>
        </div>
        <div>
          <dt>Created at</dt>
          <dd>
            <Time iso={chain.createdAt} />
          </dd>
        </div>
        <div>
          <dt>Hash version</dt>
          <dd>
            {chain.hashVersion === 2
              ? '2 (salted commitments: its events’ actor, resource and context can be erased)'
              : '1 (its events cannot be erased)'}
          </dd>
        </div>
        <div>
          <dt>First retained position</dt>
          <dd>{chain.firstPosition}</dd>
        </div>
        <div>
          <dt>Retention</dt>
          <dd>{retentionText(chain)}</dd>
        </div>
        <div>
          <dt>Legal hold</dt>
          <dd>{holdText(chain)}</dd>
        </div>
      </dl>
      <div class="actions">
        <button type="button" onClick={() => void verify()} disabled={verifying} aria-label={`Verify ${chain.name}`}>
          Verify
        </button>
        <button type="button" onClick={() => void showCheckpoint()} aria-label={`Latest checkpoint of ${chain.name}`}>
          Latest checkpoint
        </button>
        <Link to={href('/events', { q: `chain_id:${chain.id}`, account: pageAccount() })}>Events of {chain.name}</Link>
      </div>
      {verifying && <Busy label={`Verifying… (${chain.eventCount} events of ${chain.name})`} />}
      <ErrorText error={error} />
      {result && (
        <div role="status">
          <p class={result.valid ? 'ok' : 'bad'}>
            {result.valid
              ? `Verified: ${result.checkedEvents} events and ${result.checkpointsChecked} checkpoints hold.`
              : `Not valid: ${result.errorCount} error(s), the first at position ${result.firstInvalidPosition ?? '?'}.`}
          </p>
          <ul>
            {result.errors.map((e, i) => (
              <li key={i}>
                Position {e.position}: {e.message}
              </li>
            ))}
          </ul>
        </div>
      )}
      {checkpoint !== null && <pre class="mono note">{checkpoint}</pre>}
      {manage && <RetentionSettings chain={chain} onChanged={setChain} />}
    </section>
  );
}

const days = (n: number) => (n === 1 ? '1 day' : `${n} days`);

/** Own and effective retention: a chain's own null follows the account; an effective null keeps forever. */
function retentionText(chain: Chain): string {
  const effective = chain.effectiveRetentionDays === null ? 'forever' : days(chain.effectiveRetentionDays);
  return chain.retentionDays === null
    ? `${effective} (follows the account)`
    : `${days(chain.retentionDays)} (its own setting)`;
}

function holdText(chain: Chain): string {
  if (chain.legalHold && chain.legalHoldBy === 'operator')
    return 'On hold (its own hold, placed by an operator): nothing is pruned';
  if (chain.legalHold) return 'On hold (its own hold): nothing is pruned';
  if (chain.effectiveLegalHold) return 'On hold (the account’s hold): nothing is pruned';
  return 'None';
}

const MAX_DAYS = 36_500;
/**
 * The least retention of an `_audit` chain: the service's `AUDIT_MIN_RETENTION_DAYS`, 365 unless its
 * operator changed it (docs/contract.md §14); a shorter setting is refused by the service in words.
 */
const AUDIT_MIN_DAYS = 365;

/**
 * The chain's own retention and legal hold (PUT /v1/chain/:chainId/retention and …/legal-hold,
 * docs/contract.md §14), for `admin` and `operator` keys; the service records each change in `_audit`.
 */
function RetentionSettings({ chain, onChanged }: { chain: Chain; onChanged: (chain: Chain) => void }) {
  const minDays = chain.name === '_audit' ? AUDIT_MIN_DAYS : 1;
  const [daysInput, setDaysInput] = useState(chain.retentionDays == null ? '' : String(chain.retentionDays));
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState('');
  const put = async (path: string, body: unknown, said: (chain: Chain) => string) => {
    setDone('');
    setBusy(true);
    setError(null);
    try {
      const changed = (
        await api.send<{ data: Chain }>('PUT', `/v1/chain/${encodeURIComponent(chain.id)}/${path}`, body)
      ).data;
      onChanged(changed);
      setDone(said(changed));
      return true;
    } catch (e) {
      setError(e);
      return false;
    } finally {
      setBusy(false);
    }
  };
  const saveRetention = () => {
    const text = daysInput.trim();
    const value = text === '' ? null : Number(text);
    if (value !== null && !(Number.isInteger(value) && value >= minDays && value <= MAX_DAYS)) {
      setDone('');
      setError(`Retention days must be a whole number from ${minDays} to ${MAX_DAYS}, or empty to follow the account.`);
      return;
    }
    void put(
      'retention',
      { days: value } satisfies RetentionBody,
      (c) => `Retention of ${c.name} saved: ${retentionText(c)}.`,
    );
  };
  /** Lifting needs no reason (docs/contract.md §14); one given is recorded with the change. */
  const changeHold = async (hold: boolean) => {
    const why = reason.trim();
    if (hold && why === '') {
      setDone('');
      setError('A reason is required to place a legal hold.');
      return;
    }
    const body: LegalHoldBody = hold ? { hold, reason: why } : { hold, reason: why === '' ? null : why };
    const ok = await put('legal-hold', body, (c) =>
      hold ? `Legal hold placed on ${c.name}.` : `Legal hold on ${c.name} lifted.`,
    );
    if (ok) setReason('');
  };
  const id = `chain-${chain.id}`;
  const label = chain.name;
  return (
    <div class="settings">
      <h3>Retention and legal hold</h3>
      <form
        class="search"
        onSubmit={(e) => {
          e.preventDefault();
          saveRetention();
        }}
      >
        <div class="field">
          <label for={`${id}-days`}>Retention days for {label}</label>
          <input
            id={`${id}-days`}
            type="number"
            inputMode="numeric"
            min={minDays}
            max={MAX_DAYS}
            step={1}
            value={daysInput}
            aria-describedby={`${id}-days-hint`}
            onInput={(e) => setDaysInput(e.currentTarget.value)}
          />
          <span id={`${id}-days-hint`} class="hint">
            {minDays} to {MAX_DAYS}
            {chain.name === '_audit' && ' (the service keeps its own record at least this long)'}; empty to follow the
            account.
          </span>
        </div>
        <button type="submit" disabled={busy}>
          Save retention
        </button>
      </form>
      <form
        class="search"
        onSubmit={(e) => {
          e.preventDefault();
          void changeHold(!chain.legalHold);
        }}
      >
        <div class="field grow">
          <label for={`${id}-reason`}>Legal hold reason for {label}</label>
          <input
            id={`${id}-reason`}
            value={reason}
            maxLength={512}
            aria-describedby={`${id}-reason-hint`}
            onInput={(e) => setReason(e.currentTarget.value)}
          />
          <span id={`${id}-reason-hint`} class="hint">
            Required to place a hold.
          </span>
        </div>
        <button type="submit" disabled={busy}>
          {chain.legalHold ? 'Lift legal hold' : 'Place legal hold'}
        </button>
      </form>
      <ErrorText error={error} />
      {done && (
        <p class="ok" role="status">
          {done}
        </p>
      )}
    </div>
  );
}
