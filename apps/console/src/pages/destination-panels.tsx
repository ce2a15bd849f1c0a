import { useEffect, useRef, useState } from 'preact/hooks';
import type { Destination } from '../types';
import { localToIso } from '../ui';

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

/** What a person asked for that needs one more answer: a replay's time, or a delete's confirmation (`Confirm`). */
export type Pending = { action: 'replay' | 'delete'; destination: Destination };

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
  const box = useRef<HTMLElement>(null);
  useEffect(() => box.current?.querySelector<HTMLElement>('input')?.focus(), [destination]);
  return (
    <section class="pending" aria-labelledby="pending-title" ref={box}>
      <h2 id="pending-title">Replay {destination.name}</h2>
      <form
        class="search"
        onSubmit={(e) => {
          e.preventDefault();
          const iso = localToIso(from);
          if (iso !== undefined) props.onReplay(iso);
        }}
      >
        <p class="grow-line">Every retained event appended since this time is delivered again, none before.</p>
        <div class="field">
          <label for="replay-from">From</label>
          <input
            id="replay-from"
            type="datetime-local"
            step={1}
            required
            value={from}
            onInput={(e) => setFrom(e.currentTarget.value)}
          />
        </div>
        <button type="submit" disabled={props.busy}>
          Replay from this time
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </form>
    </section>
  );
}
