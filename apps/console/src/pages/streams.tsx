import { useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { useLocation } from '../router';
import type { Destination, DestinationWithSecret, Me, NewDestinationBody, ReplayBody } from '../types';
import { ageText } from '../clock';
import { Busy, CardTable, type Column, Confirm, ErrorText, Page, Time } from '../ui';
import { DestinationForm } from './destination-form';
import {
  type DestinationChange,
  EditPanel,
  type Pending,
  ReplayPanel,
  SecretPanel,
  type ShownSecret,
} from './destination-panels';
import { healthText, lagText, STATES, targetOf } from './destination-text';
import { useDestinations } from './use-destinations';

/** Streams (docs/contract.md §16): the key's own account's destinations, or `?account=` for an operator. */
export function StreamsPage({ me }: { me: Me | null }) {
  const { query } = useLocation();
  const accountId = query.get('account') ?? me?.accountId;
  if (!accountId)
    return (
      <Page title="Streams">
        <p>This service does not say which account the key belongs to.</p>
      </Page>
    );
  return <StreamsOf key={accountId} accountId={accountId} me={me} />;
}

function StreamsOf({ accountId, me }: { accountId: string; me: Me | null }) {
  const base = `/v1/accounts/${encodeURIComponent(accountId)}/destinations`;
  const [cursor, setCursor] = useState<string | undefined>();
  const list = useDestinations(base, cursor);
  const [secret, setSecret] = useState<ShownSecret | null>(null);
  const [pending, setPending] = useState<Pending | null>(null);
  const [done, setDone] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [formKey, setFormKey] = useState(0);
  const acting = useRef(false);
  const status = useRef<HTMLParagraphElement>(null);

  /**
   * Runs one change at a time; reads the list again, then says what it did (its answer) or why
   * the service refused it. The row's buttons stay enabled meanwhile, so none loses the focus.
   * Whether it was done: a delete's button is gone after it, so the focus goes to its words.
   */
  const act = async (work: () => Promise<string>): Promise<boolean> => {
    if (acting.current) return false;
    acting.current = true;
    setError(null);
    setDone('');
    setBusy(true);
    let words: string | null = null;
    try {
      words = await work();
      setPending(null);
    } catch (e) {
      setError(e);
    }
    await list.refresh();
    acting.current = false;
    setBusy(false);
    if (words !== null) setDone(words);
    return words !== null;
  };
  const path = (d: Destination, verb = '') => `${base}/${encodeURIComponent(d.id)}${verb && `/${verb}`}`;
  const post = (d: Destination, verb: string, body: object = {}) =>
    api.send<{ data: DestinationWithSecret }>('POST', path(d, verb), body);
  const showSecret = ({ id, name, secret }: DestinationWithSecret, rotated: boolean) => {
    if (secret !== undefined) setSecret({ id, name, secret, rotated });
  };

  const create = (body: NewDestinationBody) =>
    void act(async () => {
      const created = (await api.send<{ data: DestinationWithSecret }>('POST', base, body)).data;
      showSecret(created, false);
      setFormKey((n) => n + 1);
      return `Destination ${created.name} created.`;
    });
  const pause = (d: Destination) => void act(() => post(d, 'pause').then(() => `${d.name} paused.`));
  const resume = (d: Destination) => void act(() => post(d, 'resume').then(() => `${d.name} resumed.`));
  const rotate = (d: Destination) =>
    void act(async () => {
      showSecret((await post(d, 'rotate-secret')).data, true);
      return `The secret of ${d.name} was rotated.`;
    });
  const replay = (d: Destination, from: string) =>
    void act(() =>
      post(d, 'replay', { from } satisfies ReplayBody).then(
        () => `${d.name} delivers again every event since ${from}.`,
      ),
    );
  const edit = (d: Destination, change: DestinationChange) =>
    void act(async () => {
      if (Object.keys(change).length === 0) return `Nothing changed in ${d.name}.`;
      const changed = (await api.send<{ data: Destination }>('PATCH', path(d), change)).data;
      return `${changed.name} saved.`;
    });
  const remove = (d: Destination) =>
    void act(async () => {
      await api.send('DELETE', path(d));
      if (secret?.id === d.id) setSecret(null);
      return `${d.name} deleted.`;
    }).then((deleted) => deleted && status.current?.focus());

  /**
   * A destination's buttons, as one compact group of its own (issue 40 item 4); Replay, Edit and Delete
   * ask first (ReplayPanel, EditPanel, Confirm). A function, not a component made here, so a refresh
   * keeps the same buttons (and the focus).
   */
  const actions = (d: Destination) => (
    <span class="button-group" role="group" aria-label={`Actions for ${d.name}`}>
      {d.state === 'paused' || d.state === 'disabled' ? (
        <button type="button" aria-label={`Resume ${d.name}`} onClick={() => resume(d)}>
          Resume
        </button>
      ) : (
        <button type="button" aria-label={`Pause ${d.name}`} onClick={() => pause(d)}>
          Pause
        </button>
      )}
      <button
        type="button"
        aria-label={`Edit ${d.name}…`}
        onClick={() => setPending({ action: 'edit', destination: d })}
      >
        Edit…
      </button>
      <button
        type="button"
        aria-label={`Replay ${d.name}…`}
        onClick={() => setPending({ action: 'replay', destination: d })}
      >
        Replay…
      </button>
      {d.kind === 'webhook' && (
        <button type="button" aria-label={`Rotate secret of ${d.name}`} onClick={() => rotate(d)}>
          Rotate secret
        </button>
      )}
      <button
        type="button"
        class="danger"
        aria-label={`Delete ${d.name}…`}
        onClick={() => setPending({ action: 'delete', destination: d })}
      >
        Delete…
      </button>
    </span>
  );

  const columns: Column<Destination>[] = [
    { header: 'Name', class: 'lead', cell: (d) => d.name },
    {
      header: 'Sends to',
      cell: (d) => (
        <>
          {`${d.kind} (${d.format}) at `}
          <span class="mono block">{targetOf(d.url)}</span>
        </>
      ),
    },
    {
      header: 'State',
      cell: (d) => (
        <>
          <StateText destination={d} />
          <span class="health">{healthText(d, ageText)}</span>
        </>
      ),
    },
    { header: 'Lag', cell: (d) => lagText(d.lagSeconds) },
    {
      header: 'Delivered',
      cell: (d) =>
        d.lastDeliveredAt === null ? (
          'nothing yet'
        ) : (
          <>
            {`${d.deliveredEvents === 1 ? '1 event' : `${d.deliveredEvents} events`}, the last at `}
            <span class="block">
              <Time iso={d.lastDeliveredAt} />
            </span>
          </>
        ),
    },
    { header: 'Actions', cell: actions },
  ];
  const rows = list.page?.data;
  return (
    <Page title={me?.accountId === accountId ? 'Streams' : `Streams of ${accountId}`}>
      <DestinationForm key={formKey} busy={busy} onCreate={create} />
      {secret && <SecretPanel shown={secret} onDone={() => setSecret(null)} />}
      <p role="status" tabIndex={-1} ref={status}>
        {done}
      </p>
      <ErrorText error={error ?? list.error} />
      {pending?.action === 'replay' && (
        <ReplayPanel
          destination={pending.destination}
          busy={busy}
          onReplay={(from) => replay(pending.destination, from)}
          onCancel={() => setPending(null)}
        />
      )}
      {pending?.action === 'edit' && (
        <EditPanel
          key={pending.destination.id}
          destination={pending.destination}
          busy={busy}
          onSave={(change) => edit(pending.destination, change)}
          onCancel={() => setPending(null)}
        />
      )}
      {pending?.action === 'delete' && (
        <Confirm
          title={`Delete destination ‘${pending.destination.name}’?`}
          action={`Yes, delete ${pending.destination.name}`}
          busy={busy}
          onConfirm={() => remove(pending.destination)}
          onCancel={() => setPending(null)}
          words={
            <p>
              Delivery to {targetOf(pending.destination.url)} stops for good and where it stood is forgotten. The events
              stay in the trail.
            </p>
          }
        />
      )}
      {list.loading && <Busy label="Loading destinations" />}
      {rows && rows.length === 0 && <p>No destinations yet: events of this account are not streamed anywhere.</p>}
      {rows && rows.length > 0 && (
        <CardTable
          caption={`Destinations${cursor ? ' (next page)' : ''}`}
          columns={columns}
          rows={rows}
          rowKey={(d) => d.id}
        />
      )}
      {list.page?.nextCursor && (
        <button type="button" onClick={() => setCursor(list.page?.nextCursor)}>
          Next page
        </button>
      )}
    </Page>
  );
}

/** The state in words after a mark of its own shape; the colour only repeats what both say. */
function StateText({ destination }: { destination: Destination }) {
  const { mark, words } = STATES[destination.state];
  return (
    <span class={`state state-${destination.state}`}>
      <span aria-hidden="true">{mark}</span> {words}
    </span>
  );
}
