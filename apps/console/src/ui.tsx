import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { describe } from './api';
import { formatInstant, localZoneAbbreviation, localZoneName, setZone, useZone, zoneLabel } from './clock';

/** An API error in words (never a blank page). */
export function ErrorText({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  return (
    <p class="error" role="alert">
      {describe(error)}
    </p>
  );
}

/** Shown while something slower than half a second is under way. */
export function Busy({ label }: { label: string }) {
  const [shown, setShown] = useState(false);
  useEffect(() => {
    const timer = setTimeout(() => setShown(true), 150);
    return () => clearTimeout(timer);
  }, []);
  return (
    <p class="busy" role="status">
      {shown && (
        <>
          <progress aria-label={label} /> {label}
        </>
      )}
    </p>
  );
}

/** A column of a `CardTable`: its header, what each row shows under it, and its cells' class. */
export interface Column<T> {
  header: string;
  cell: (row: T) => ComponentChildren;
  /** `mono` for ids and times; `lead` for what a narrow screen's card shows largest. */
  class?: string;
}

/**
 * A table that narrow screens show as one card per row (`.card-table` in styles.css). It stays
 * one table element at every width, so the keyboard order, the rows' links and the header of each
 * cell are the same for everyone; on a card each cell shows its header as a label that assistive
 * technology skips, since it has the real header. The roles are spelled out because some browsers
 * (Safari) drop a table's semantics once CSS changes its `display`.
 */
export function CardTable<T>(props: {
  caption: string;
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string;
  /** Opens a row clicked anywhere but on a link or button of its own. */
  onOpen?: (row: T) => void;
}) {
  const { columns, onOpen } = props;
  return (
    <div class="table-wrap">
      <table class="card-table" role="table">
        <caption>{props.caption}</caption>
        <thead role="rowgroup">
          <tr role="row">
            {columns.map((column) => (
              <th key={column.header} scope="col" role="columnheader">
                {column.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody role="rowgroup">
          {props.rows.map((row) => (
            <tr
              key={props.rowKey(row)}
              role="row"
              class={onOpen && 'clickable'}
              onClick={
                onOpen &&
                ((e) => {
                  if (!(e.target as Element).closest('a, button')) onOpen(row);
                })
              }
            >
              {columns.map((column) => (
                <td key={column.header} role="cell" class={column.class} data-label={column.header}>
                  {column.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * The question asked in the page before an action that cannot be taken back (a key's revoke or
 * rotation, a destination's delete): its title names the action and the thing, `words` say what
 * will happen, `children` hold any field the action takes (a rotation's overlap). Not
 * `window.confirm`: the page's own words and styles, in the keyboard order, read the same by a
 * screen reader. It opens with the focus on its first field, or on Cancel, never on the action;
 * Cancel or Escape close it and give the focus back to the button that opened it. The action is
 * the one `danger solid` button (styles.css), never disabled while it runs (a disabled button
 * drops the focus) but refusing a second press; after it, the page says what it did.
 */
export function Confirm(props: {
  title: string;
  action: string;
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
  words: ComponentChildren;
  children?: ComponentChildren;
}) {
  const box = useRef<HTMLElement>(null);
  const opener = useRef<Element | null>(null);
  useEffect(() => {
    if (!box.current?.contains(document.activeElement)) opener.current = document.activeElement;
    // Opened from a row far down, it is shown whole, from its title, not only down to its focus.
    box.current?.scrollIntoView({ block: 'nearest' });
    box.current?.querySelector<HTMLElement>('input, select, button')?.focus({ preventScroll: true });
  }, [props.title]);
  const cancel = () => {
    props.onCancel();
    const back = opener.current;
    if (back instanceof HTMLElement && back.isConnected) back.focus();
  };
  return (
    <section
      class="confirm"
      aria-labelledby="confirm-title"
      aria-describedby="confirm-words"
      ref={box}
      onKeyDown={(e) => {
        if (e.key === 'Escape') cancel();
      }}
    >
      <h2 id="confirm-title">{props.title}</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!props.busy) props.onConfirm();
        }}
      >
        <div id="confirm-words">{props.words}</div>
        {props.children}
        <div class="actions">
          <button type="button" onClick={cancel}>
            Cancel
          </button>
          <button type="submit" class="danger solid" aria-disabled={props.busy}>
            {props.action}
          </button>
        </div>
      </form>
    </section>
  );
}

const INSTANT = /(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)/;

/**
 * A sentence whose ISO 8601 instants are shown in the console's one zone (clock.ts), each on one line
 * (a narrow screen broke them at their hyphens).
 */
export function Sentence({ text }: { text: string }) {
  const z = useZone();
  return (
    <>
      {text.split(INSTANT).map((part, i) =>
        i % 2 === 1 ? (
          <time key={i} class="instant" dateTime={part}>
            {formatInstant(part, z)}
          </time>
        ) : (
          part
        ),
      )}
    </>
  );
}

/** An instant in the console's zone, with the zone's name; `none` (or the words given) when there is none. */
export function Time({
  iso,
  none = 'none',
  precise,
}: {
  iso: string | null | undefined;
  none?: string;
  precise?: boolean;
}) {
  const z = useZone();
  if (!iso) return <>{none}</>;
  return (
    <time class="instant" dateTime={iso}>
      {formatInstant(iso, z, precise)}
    </time>
  );
}

/**
 * The console's one clock, switched here (issue 40 item 1): UTC by default, or the browser's zone.
 * Every time shown and every time field follows it and says which it is.
 */
export function ZoneSwitch() {
  const z = useZone();
  return (
    <label class="zone">
      <span>Times in</span>{' '}
      <select value={z} onChange={(e) => setZone(e.currentTarget.value === 'local' ? 'local' : 'utc')}>
        <option value="utc">UTC</option>
        <option value="local" title={localZoneName()}>
          local ({localZoneAbbreviation()})
        </option>
      </select>
    </label>
  );
}

/**
 * A field an erasure removed (docs/contract.md §17): a mark, not a value, so that it never reads as an
 * actor or resource named "(erased)"; `detail` says which erasure, when and why, when that is known.
 */
export function Erased({ detail }: { detail?: ComponentChildren }) {
  return (
    <span class="erased">
      <span class="erased-mark">erased</span>
      {detail && <span class="erased-detail"> {detail}</span>}
    </span>
  );
}

/**
 * A `datetime-local` field in the console's zone, its label saying which zone (`After (UTC)`); the value
 * is kept as the person typed it, and read as an instant with `fromField`.
 */
export function TimeField(props: {
  id: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  required?: boolean;
}) {
  const z = useZone();
  return (
    <div class="field">
      <label for={props.id}>
        {props.label} ({zoneLabel(z)})
      </label>
      <input
        id={props.id}
        type="datetime-local"
        step={1}
        required={props.required}
        value={props.value}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
    </div>
  );
}

export function Page({ title, children }: { title: string; children: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · Audit trail console`;
  }, [title]);
  return (
    <>
      <h1>{title}</h1>
      {children}
    </>
  );
}

/** A loader's state: the value, the error, or neither while it runs; `reload` runs it again. */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ value?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    setState({ loading: true });
    load(controller.signal).then(
      (value) => !controller.signal.aborted && setState({ value, loading: false }),
      (error: unknown) => !controller.signal.aborted && setState({ error, loading: false }),
    );
    return () => controller.abort();
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((n) => n + 1) };
}
