import { useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { href, Link, navigate, useLocation } from '../router';
import { mayManage, type Me, type Schema, type SchemasList, type SchemaWithVersions } from '../types';
import { Busy, CardTable, type Column, Confirm, ErrorText, Page, Time, useLoad } from '../ui';
import { SchemaCompare } from './schema-compare';
import { SchemaEditor, STARTER } from './schema-editor';
import { formatSchema, MODES, stateOf } from './schema-text';

/**
 * Action schemas (docs/contract.md §19; issue 42 item 4), for `admin` keys of their account and
 * `operator` keys of the account chosen in the header: each action's latest schema, an action's
 * versions side by side, and the next version after a preview of what it would reject. The action
 * and the two versions compared are the page's URL (`?action=`, `from`, `to`).
 */
export function SchemasPage({ me }: { me: Me | null }) {
  const { query } = useLocation();
  const accountId = query.get('account') ?? me?.accountId;
  if (me !== null && !mayManage(me))
    return (
      <Page title="Schemas">
        <p class="error" role="alert">
          This key may not see or change action schemas: they are for admin keys of their account and for operator keys.
          This key has {me.scopes.join(', ')}.
        </p>
      </Page>
    );
  if (!accountId)
    return (
      <Page title="Schemas">
        <p>This service does not say which account the key belongs to.</p>
      </Page>
    );
  return <SchemasOf key={accountId} accountId={accountId} me={me} />;
}

function SchemasOf({ accountId, me }: { accountId: string; me: Me | null }) {
  const { query } = useLocation();
  const account = query.get('account') ?? undefined;
  const action = query.get('action') ?? undefined;
  const base = `/v1/accounts/${encodeURIComponent(accountId)}/schemas`;
  const [done, setDone] = useState('');
  const status = useRef<HTMLParagraphElement>(null);
  const to = (q: { action?: string; from?: number; to?: number }) =>
    href('/schemas', { account, action: q.action, from: q.from?.toString(), to: q.to?.toString() });
  const saved = (s: Schema) => {
    setDone(`Version ${s.version} of ${s.action} saved, mode ${s.mode}: ${MODES[s.mode].means}.`);
    navigate(to({ action: s.action }));
    status.current?.focus();
  };
  const title = me?.accountId === accountId ? 'Schemas' : `Schemas of ${accountId}`;
  return (
    <Page title={action ? `${title}: ${action}` : title}>
      <p>
        A schema says what the events of an action (or of every action under a prefix, <code>invoice.*</code>) must hold
        in their actor, resource and context. Under <strong>warn</strong> an event that does not match is stored and
        counted; under <strong>enforce</strong> it is refused. Every version is kept.
      </p>
      <p role="status" tabIndex={-1} ref={status}>
        {done}
      </p>
      {action ? (
        <ActionSchema
          base={base}
          action={action}
          account={account}
          from={Number(query.get('from')) || undefined}
          to={Number(query.get('to')) || undefined}
          link={to}
          onSaved={saved}
          onDeleted={(s) => {
            setDone(`The schema of ${s.action} is deleted (version ${s.version}): its appends are no longer checked.`);
            status.current?.focus();
          }}
        />
      ) : (
        <SchemaList base={base} link={to} account={account} onSaved={saved} />
      )}
    </Page>
  );
}

type LinkTo = (q: { action?: string; from?: number; to?: number }) => string;

/** Each action's latest version, and the editor of a new one. */
function SchemaList(props: { base: string; account: string | undefined; link: LinkTo; onSaved: (s: Schema) => void }) {
  const list = useLoad((signal) => api.get<SchemasList>(props.base, undefined, signal), [props.base]);
  const columns: Column<Schema>[] = [
    {
      header: 'Action',
      class: 'mono lead',
      cell: (s) => <Link to={props.link({ action: s.action })}>{s.action}</Link>,
    },
    { header: 'Version', cell: (s) => s.version },
    { header: 'Mode', cell: (s) => <ModeText schema={s} /> },
    {
      header: 'Changed',
      cell: (s) => (
        <>
          <Time iso={s.createdAt} />
          <span class="own-line">
            by key <span class="mono">{s.keyId}</span>
          </span>
        </>
      ),
    },
  ];
  return (
    <>
      <ErrorText error={list.error} />
      {list.loading && <Busy label="Loading schemas" />}
      {list.value && list.value.data.length === 0 && <p>No schema yet: every action’s events are free-form.</p>}
      {list.value && list.value.data.length > 0 && (
        <CardTable
          caption="Each action’s latest schema, oldest action first"
          columns={columns}
          rows={list.value.data}
          rowKey={(s) => s.action}
        />
      )}
      <SchemaEditor base={props.base} account={props.account} text={STARTER} mode="warn" onSaved={props.onSaved} />
    </>
  );
}

/** One action: its versions, two of them side by side, the editor of the next, and Delete. */
function ActionSchema(props: {
  base: string;
  action: string;
  account: string | undefined;
  from?: number;
  to?: number;
  link: LinkTo;
  onSaved: (s: Schema) => void;
  onDeleted: (s: Schema) => void;
}) {
  const { base, action } = props;
  const path = `${base}/${encodeURIComponent(action)}`;
  const [tick, setTick] = useState(0);
  const loaded = useLoad(
    (signal) => api.get<{ data: SchemaWithVersions }>(path, undefined, signal).then((a) => a.data),
    [path, tick],
  );
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const remove = async () => {
    setBusy(true);
    setError(null);
    try {
      const deleted = (await api.send<{ data: Schema }>('DELETE', path)).data;
      setAsking(false);
      setTick((n) => n + 1);
      props.onDeleted(deleted);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const latest = loaded.value;
  const count = latest?.versions.length ?? 0;
  const clamp = (n: number | undefined, fallback: number) => (n !== undefined && n >= 1 && n <= count ? n : fallback);
  return (
    <>
      <p>
        <Link to={props.link({})}>All schemas</Link>
      </p>
      <ErrorText error={loaded.error} />
      {loaded.loading && <Busy label={`Loading the schema of ${action}`} />}
      {latest && (
        <>
          <h2>
            <span class="mono">{latest.action}</span>: version {latest.version}, <ModeText schema={latest} />
          </h2>
          <p class="hint">
            Made <Time iso={latest.createdAt} /> by key <span class="mono">{latest.keyId}</span>; {count} version
            {count === 1 ? '' : 's'} in all.
          </p>
          {count === 1 ? (
            <pre class="mono schema-text" role="group" tabIndex={0} aria-label={`Schema of version ${latest.version}`}>
              {formatSchema(latest.schema)}
            </pre>
          ) : (
            <SchemaCompare
              base={base}
              action={action}
              versions={latest.versions}
              from={clamp(props.from, count - 1)}
              to={clamp(props.to, count)}
              onChoose={(from, to) => navigate(props.link({ action, from, to }), true)}
            />
          )}
          <SchemaEditor
            key={latest.version}
            base={base}
            account={props.account}
            action={action}
            text={latest.schema === null ? STARTER : formatSchema(latest.schema)}
            mode={latest.mode}
            nextVersion={latest.version + 1}
            onSaved={(s) => {
              setTick((n) => n + 1);
              props.onSaved(s);
            }}
          />
          {latest.schema !== null && (
            <div class="actions">
              <button type="button" class="danger" onClick={() => setAsking(true)}>
                Delete schema…
              </button>
            </div>
          )}
          {asking && (
            <Confirm
              title={`Delete the schema of ‘${action}’?`}
              action={`Yes, delete the schema of ${action}`}
              busy={busy}
              onConfirm={() => void remove()}
              onCancel={() => {
                setAsking(false);
                setError(null);
              }}
              words={
                <p>
                  Version {latest.version + 1} will have no schema: appends of {action} are no longer checked (a shorter
                  prefix’s schema applies, if there is one). Versions 1 to {latest.version} are kept.
                </p>
              }
            >
              <ErrorText error={error} />
            </Confirm>
          )}
        </>
      )}
    </>
  );
}

/** A mode (or a deletion) in words after a mark of its own shape; the colour only repeats what both say. */
function ModeText({ schema }: { schema: Pick<Schema, 'mode' | 'schema'> }) {
  const state = stateOf(schema);
  const { mark, words, means } = MODES[state];
  return (
    <span class={`mode mode-${state}`} title={means}>
      <span aria-hidden="true">{mark}</span> {words}
    </span>
  );
}
