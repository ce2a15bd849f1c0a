import { useEffect, useState } from 'preact/hooks';
import type { Key, Me, NewKey } from '../types';
import { Confirm, Sentence } from '../ui';
import { OVERLAP, overlapText, parseOverlap } from './key-text';

/** A key's secret from a create or a rotate answer, in the page's state only; a rotation also says when the old key stops. */
export interface ShownKey {
  key: NewKey;
  /** After a rotation: what becomes of the old key (`oldKeyText`). */
  replaced?: string;
}

/** The secret, shown this once (docs/contract.md §12), with a Copy button. */
export function KeySecretPanel({ shown }: { shown: ShownKey }) {
  const [copied, setCopied] = useState('');
  useEffect(() => setCopied(''), [shown]);
  const { key, replaced } = shown;
  return (
    <div class="secret" role="status">
      <p>
        {replaced ? 'The new secret of ' : 'The secret of '}
        <strong>{key.name}</strong> is shown this once; copy it now.
        {replaced && <Sentence text={` ${replaced}`} />}
      </p>
      <code class="mono">{key.secret}</code>{' '}
      <button
        type="button"
        onClick={() =>
          void navigator.clipboard.writeText(key.secret).then(
            () => setCopied('Copied.'),
            () => setCopied('Copying was refused by the browser: select the secret and copy it.'),
          )
        }
      >
        Copy
      </button>{' '}
      <span>{copied}</span>
    </div>
  );
}

/** A revoke or a rotation that waits for its confirmation. */
export type PendingKey = { action: 'revoke' | 'rotate'; key: Key };

/**
 * The confirmation of a revoke or a rotation (`Confirm`): what happens to the key, and for a
 * rotation the overlap, 0–86,400 s (default an hour, as the service's), with when the old key stops.
 */
export function KeyConfirm(props: {
  pending: PendingKey;
  me: Me | null;
  busy: boolean;
  onRevoke: () => void;
  onRotate: (overlapSeconds: number) => void;
  onCancel: () => void;
}) {
  const { action, key } = props.pending;
  const [overlap, setOverlap] = useState(String(OVERLAP.default));
  useEffect(() => setOverlap(String(OVERLAP.default)), [props.pending]);
  const named = `key ‘${key.name}’ (prefix ${key.prefix})`;
  const own = key.id === props.me?.keyId && (
    <p>
      <strong>This console is signed in with this key.</strong>
    </p>
  );
  if (action === 'revoke')
    return (
      <Confirm
        title={`Revoke ${named}?`}
        action={`Yes, revoke ${key.name}`}
        busy={props.busy}
        onConfirm={props.onRevoke}
        onCancel={props.onCancel}
        words={
          <>
            <p>Requests with it are refused within 5 seconds, on every instance. A revoked key cannot be used again.</p>
            {own}
          </>
        }
      />
    );
  const seconds = parseOverlap(overlap);
  return (
    <Confirm
      title={`Rotate ${named}?`}
      action={`Yes, rotate ${key.name}`}
      busy={props.busy}
      onConfirm={() => seconds !== null && props.onRotate(seconds)}
      onCancel={props.onCancel}
      words={
        <>
          <p>
            A new key with the same name and scopes is made and its secret shown once. The old key keeps working for the
            overlap chosen here, then it is refused.
          </p>
          {own}
        </>
      }
    >
      <div class="field">
        <label for="rotate-overlap">
          Overlap in seconds ({OVERLAP.min} to {OVERLAP.max.toLocaleString('en')})
        </label>
        <input
          id="rotate-overlap"
          aria-describedby="rotate-overlap-says"
          type="number"
          inputMode="numeric"
          min={OVERLAP.min}
          max={OVERLAP.max}
          step={1}
          required
          value={overlap}
          onInput={(e) => setOverlap(e.currentTarget.value)}
        />
      </div>
      <p id="rotate-overlap-says">
        <Sentence
          text={
            seconds === null
              ? `Enter whole seconds from ${OVERLAP.min} to ${OVERLAP.max.toLocaleString('en')}.`
              : overlapText(seconds, new Date(), key.expiresAt)
          }
        />
      </p>
    </Confirm>
  );
}
