import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Destination, DestinationFormat } from '../types';
import { fromField } from '../clock';
import { TimeField } from '../ui';
import { DeliveryFields, FormatField, NameField } from './destination-fields';
import { formatsFor } from './destination-text';

/** A webhook's signing secret, from a create or a rotate-secret answer: shown this once, in memory only. */
export interface ShownSecret {
  /** The destination's id: a delete of it forgets the secret. */
  id: string;
  name: string;
  secret: string;
  rotated: boolean;
}

/**
 * The secret with a Copy button and a plain warning. It lives in the page's state only: a reload,
 * another page, or the next secret forgets it (the service never answers it again, docs/contract.md §16).
 */
export function SecretPanel({ shown, onDone }: { shown: ShownSecret; onDone: () => void }) {
  const [copied, setCopied] = useState('');
  useEffect(() => setCopied(''), [shown]);
  return (
    <div class="secret" role="status">
      <p>
        {shown.rotated ? 'The new signing secret of ' : 'The signing secret of '}
        <strong>{shown.name}</strong> is shown this once: copy it now, <strong>you will not see it again</strong>.
        {shown.rotated && ' The old secret also signs every request for the next 24 hours.'}
      </p>
      <code class="mono">{shown.secret}</code>{' '}
      <span class="actions">
        <button
          type="button"
          onClick={() =>
            void navigator.clipboard.writeText(shown.secret).then(
              () => setCopied('Copied.'),
              () => setCopied('Copying was refused by the browser: select the secret and copy it.'),
            )
          }
        >
          Copy
        </button>
        <button type="button" onClick={onDone}>
          I have copied it
        </button>
        <span>{copied}</span>
      </span>
    </div>
  );
}

/** What a person asked for that needs one more answer: a replay's time, an edit's fields, or a delete's confirmation (`Confirm`). */
export type Pending = { action: 'replay' | 'delete' | 'edit'; destination: Destination };

/**
 * The question of a Replay, in the page rather than a browser dialog, so it reads and works the
 * same with a keyboard and a screen reader; it takes the focus when it opens.
 */
export function ReplayPanel(props: {
  destination: Destination;
  busy: boolean;
  onReplay: (from: string) => void;
  onCancel: () => void;
}) {
  const { destination } = props;
  const [from, setFrom] = useState('');
  return (
    <ActionPanel
      id="pending"
      title={`Replay ${destination.name}`}
      focusKey={destination}
      busy={props.busy}
      submitLabel="Replay from this time"
      onSubmit={() => {
        const iso = fromField(from);
        if (iso !== undefined) props.onReplay(iso);
      }}
      onCancel={props.onCancel}
    >
      <p class="grow-line">Every retained event appended since this time is delivered again, none before.</p>
      <TimeField id="replay-from" label="From" value={from} onInput={setFrom} required />
    </ActionPanel>
  );
}

/** The fields an edit changes (PATCH …/destinations/:id, docs/contract.md §16); credentials are left as they are. */
export type DestinationChange = Partial<Pick<Destination, 'name' | 'url' | 'format' | 'batchSize'>> & {
  q?: string | null;
};

/**
 * A destination's edit, in the page (issue 40 item 4): its name, URL, format, filter and batch size,
 * sent as the fields that changed only; the service checks them as on a create.
 */
export function EditPanel(props: {
  destination: Destination;
  busy: boolean;
  onSave: (change: DestinationChange) => void;
  onCancel: () => void;
}) {
  const { destination: d } = props;
  const [name, setName] = useState(d.name);
  const [url, setUrl] = useState(d.url);
  const [format, setFormat] = useState<DestinationFormat>(d.format);
  const [q, setQ] = useState(d.q ?? '');
  const [batchSize, setBatchSize] = useState(String(d.batchSize));
  const change = (): DestinationChange => {
    const out: DestinationChange = {};
    if (name.trim() !== d.name) out.name = name.trim();
    if (url.trim() !== d.url) out.url = url.trim();
    if (format !== d.format) out.format = format;
    if (q.trim() !== (d.q ?? '')) out.q = q.trim() === '' ? null : q.trim();
    if (Number(batchSize) !== d.batchSize) out.batchSize = Number(batchSize);
    return out;
  };
  return (
    <ActionPanel
      id="edit"
      title={`Edit ${d.name}`}
      focusKey={d.id}
      busy={props.busy}
      submitLabel="Save changes"
      onSubmit={() => props.onSave(change())}
      onCancel={props.onCancel}
    >
      <NameField id="edit" value={name} onInput={setName} />
      <div class="field grow">
        <label for="edit-url">URL</label>
        <input
          id="edit-url"
          type="url"
          value={url}
          required
          maxLength={2048}
          spellcheck={false}
          onInput={(e) => setUrl(e.currentTarget.value)}
        />
      </div>
      <FormatField id="edit" formats={formatsFor(d.kind)} value={format} onChange={setFormat} />
      <DeliveryFields
        id="edit"
        qLabel="Only events matching (empty: all)"
        q={q}
        onQ={setQ}
        batchSize={batchSize}
        onBatchSize={setBatchSize}
      />
    </ActionPanel>
  );
}

/**
 * A panel in the page that asks one thing of a destination: its title, its fields, the action and
 * Cancel. Its first field has the focus when it opens, or when it turns to another destination.
 */
function ActionPanel(props: {
  id: string;
  title: string;
  focusKey: unknown;
  busy: boolean;
  submitLabel: string;
  onSubmit: () => void;
  onCancel: () => void;
  children: ComponentChildren;
}) {
  const box = useRef<HTMLElement>(null);
  useEffect(() => box.current?.querySelector<HTMLElement>('input')?.focus(), [props.focusKey]);
  return (
    <section class="pending" aria-labelledby={`${props.id}-title`} ref={box}>
      <h2 id={`${props.id}-title`}>{props.title}</h2>
      <form
        class="search"
        onSubmit={(e) => {
          e.preventDefault();
          props.onSubmit();
        }}
      >
        {props.children}
        <button type="submit" disabled={props.busy}>
          {props.submitLabel}
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </form>
    </section>
  );
}
