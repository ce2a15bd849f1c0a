import type { ComponentChildren } from 'preact';
import { pageAccount } from '../account';
import { api, ApiError } from '../api';
import { href, Link } from '../router';
import {
  isOperator,
  mayManage,
  type Event,
  type InclusionProof,
  type Me,
  type ProofQuery,
  type VerificationResult,
  type Witness,
  type WitnessedCheckpoint,
} from '../types';
import { Busy, Erased, ErrorText, Page, Time, useLoad } from '../ui';
import { erasedBy, erasuresOf } from './erasure-text';
import { BrowserCheck, checkInBrowser } from '../verify/browser-check';
import { parseVerifierKey } from '../verify/signed-note';
import { checkWitnessed, parseCosignatureKey, WitnessCheck } from '../verify/witnessed';

export function EventPage({ id, me }: { id: string; me: Me | null }) {
  const event = useLoad(
    (signal) => api.get<{ data: Event }>(`/v1/events/${encodeURIComponent(id)}`, undefined, signal),
    [id],
  );
  return (
    <Page title="Event">
      <p>
        <Link to={href('/events', { account: pageAccount() })}>Back to events</Link>
      </p>
      <ErrorText error={event.error} />
      {event.loading && <Busy label="Loading the event" />}
      {event.value && <EventDetails event={event.value.data} me={me} />}
    </Page>
  );
}

function EventDetails({ event, me }: { event: Event; me: Me | null }) {
  // Version-2 events (docs/contract.md §17) say which fields an erasure removed: shown as erased, not as a value.
  const erased = new Set(event.erased ?? []);
  const erasedMembers = [...erased].filter((path) => path.startsWith('context.')).map((path) => path.slice(8));
  const erasures = useLoad(
    async (signal) =>
      erased.size > 0 && mayManage(me) ? erasuresOf(event, isOperator(me) ? me?.accountId : undefined, signal) : [],
    [event.id, erased.size],
  );
  const mark = (path: string) => <Erased detail={erasedBy(path, erasures.value ?? [])} />;
  const rows: [string, ComponentChildren, string?][] = [
    ['Id', event.id, 'mono'],
    ['Time', <Time iso={event.timestamp} precise />],
    ['Created at', <Time iso={event.createdAt} precise />],
    ['Actor', erased.has('actor') ? mark('actor') : (event.actor ?? '(none)'), 'mono'],
    ['Action', event.action, 'mono'],
    ['Resource', erased.has('resource') ? mark('resource') : (event.resource ?? '(none)'), 'mono'],
    ['Chain', `${event.chain.name} (${event.chain.id})`, 'mono'],
    ['Position', String(event.chain.position), 'mono'],
    ['Hash', event.hash, 'mono'],
    ['Previous hash', event.previousHash, 'mono'],
    ['Hashing', event.hashing ? 'version 2 (salted commitments: erasable)' : 'version 1 (not erasable)'],
  ];
  return (
    <>
      <dl class="fields">
        {rows.map(([name, value, style]) => (
          <div key={name}>
            <dt>{name}</dt>
            <dd class={style}>{value}</dd>
          </div>
        ))}
        <div>
          <dt>Context</dt>
          <dd>
            <pre class="mono">{event.context === null ? '(none)' : JSON.stringify(event.context, null, 2)}</pre>
          </dd>
        </div>
        {erasedMembers.map((member) => (
          <div key={member}>
            <dt>
              Context member <span class="mono">{member}</span>
            </dt>
            <dd>{mark(`context.${member}`)}</dd>
          </div>
        ))}
      </dl>
      <ServerVerification id={event.id} />
      <BrowserVerification event={event} />
      <Witnessing event={event} />
    </>
  );
}

function ServerVerification({ id }: { id: string }) {
  const result = useLoad(
    (signal) => api.get<{ data: VerificationResult }>(`/v1/events/${id}/verify`, undefined, signal),
    [id],
  );
  const r = result.value?.data;
  return (
    <section aria-labelledby="server-check">
      <h2 id="server-check">Checked by the service</h2>
      <ErrorText error={result.error} />
      {result.loading && <Busy label="Asking the service to verify" />}
      {r && (
        <>
          <p class={r.valid ? 'ok' : 'bad'}>
            {r.valid ? 'Valid: the hash and the link to the previous event hold.' : 'Not valid.'}
          </p>
          <ul>
            {r.errors.map((e) => (
              <li key={e}>{e}</li>
            ))}
          </ul>
          <dl class="fields">
            <div>
              <dt>Stored hash</dt>
              <dd class="mono">{r.eventHash}</dd>
            </div>
            <div>
              <dt>Computed hash</dt>
              <dd class="mono">{r.computedHash}</dd>
            </div>
            <div>
              <dt>Chain intact</dt>
              <dd>{r.chainIntact ? 'yes' : 'no'}</dd>
            </div>
            <div>
              <dt>Verified at</dt>
              <dd>
                <Time iso={r.verifiedAt} />
              </dd>
            </div>
          </dl>
        </>
      )}
    </section>
  );
}

/** docs/contract.md §15: the hash, the inclusion proof and the checkpoint's signature, checked here with Web Crypto. */
function BrowserVerification({ event }: { event: Event }) {
  const {
    value: result,
    error,
    loading,
  } = useLoad(async (): Promise<BrowserCheck> => {
    const [checkpoint, verifierKey] = await Promise.all([
      api.text(`/v1/chain/${event.chain.id}/checkpoint`),
      api.text('/v1/checkpoint-key'),
    ]);
    return checkInBrowser({
      event,
      checkpoint,
      verifierKey,
      proofAt: async (size) =>
        (await api.get<{ data: InclusionProof }>(`/v1/events/${event.id}/proof`, { size } satisfies ProofQuery)).data,
    });
  }, [event]);
  return (
    <section aria-labelledby="browser-check">
      <h2 id="browser-check">Checked in your browser</h2>
      {loading && <Busy label="Checking in your browser" />}
      {error !== undefined && (
        <>
          <p class="bad verdict">Not verified</p>
          <ErrorText error={error} />
        </>
      )}
      {result && (
        <>
          <p class={`verdict ${result.verified ? 'ok' : 'bad'}`} role="status">
            {result.verified ? 'Verified in your browser' : 'Not verified'}
          </p>
          {!result.verified && (
            <p>
              What failed:{' '}
              {result.checks
                .filter((c) => !c.ok)
                .map((c) => (c.name === 'hash' ? 'the hash' : c.name === 'proof' ? 'the proof' : 'the signature'))
                .join(', ')}
              .
            </p>
          )}
          <ul class="checks">
            {result.checks.map((c) => (
              <li key={c.name} class={c.ok ? 'ok' : 'bad'}>
                <span class="mark">{c.ok ? 'Holds' : 'Fails'}</span> {c.message}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

/**
 * docs/contract.md §18: "Witnessed by k of n" when the chain's witnessed bundle checks out here against
 * the witness keys GET /v1/witnesses lists and covers this event; nothing while there is none.
 */
function Witnessing({ event }: { event: Event }) {
  const {
    value: result,
    error,
    loading,
  } = useLoad(async (): Promise<WitnessCheck | 'none' | 'no-witnesses'> => {
    const listed = (await api.get<{ data: Witness[] }>('/v1/witnesses')).data;
    if (listed.length === 0) return 'no-witnesses';
    let bundle: WitnessedCheckpoint;
    try {
      bundle = (await api.get<{ data: WitnessedCheckpoint }>(`/v1/chain/${event.chain.id}/checkpoint/witnessed`)).data;
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return 'none';
      throw e;
    }
    return checkWitnessed({
      bundle,
      serviceKey: await parseVerifierKey(await api.text('/v1/checkpoint-key')),
      witnesses: await Promise.all(listed.map((w) => parseCosignatureKey(w.key))),
      quorum: 1,
      event,
      proofAt: async (size) =>
        (await api.get<{ data: InclusionProof }>(`/v1/events/${event.id}/proof`, { size } satisfies ProofQuery)).data,
    });
  }, [event]);
  return (
    <section aria-labelledby="witnessing">
      <h2 id="witnessing">Witnesses</h2>
      {loading && <Busy label="Checking the witnesses’ cosignatures" />}
      {error !== undefined && <ErrorText error={error} />}
      {result === 'no-witnesses' && <p>This service lists no witnesses.</p>}
      {result === 'none' && <p>No witnessed checkpoint of this chain yet.</p>}
      {result && typeof result === 'object' && (
        <>
          <p class={`verdict ${result.ok ? 'ok' : 'bad'}`} role="status">
            {result.ok ? `Witnessed by ${result.cosigned} of ${result.listed}` : 'Not witnessed'}
          </p>
          <p>{result.message}</p>
        </>
      )}
    </section>
  );
}
