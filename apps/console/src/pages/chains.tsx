import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { href, Link } from '../router';
import type { Chain, ChainsPage as ChainsAnswer, ChainsQuery, ChainVerification } from '../types';
import { Busy, ErrorText, Page } from '../ui';

export function ChainsPage() {
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
  useEffect(() => void load(), []);
  return (
    <Page title="Chains">
      <ErrorText error={error} />
      <ul class="cards">
        {chains.map((chain) => (
          <li key={chain.id}>
            <ChainCard chain={chain} />
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

function ChainCard({ chain }: { chain: Chain }) {
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
          <dd class="mono">{chain.createdAt}</dd>
        </div>
      </dl>
      <div class="actions">
        <button type="button" onClick={() => void verify()} disabled={verifying} aria-label={`Verify ${chain.name}`}>
          Verify
        </button>
        <button type="button" onClick={() => void showCheckpoint()} aria-label={`Latest checkpoint of ${chain.name}`}>
          Latest checkpoint
        </button>
        <Link to={href('/events', { q: `chain_id:${chain.id}` })}>Events of {chain.name}</Link>
      </div>
      {verifying && <Busy label={`Verifying ${chain.eventCount} events`} />}
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
    </section>
  );
}
