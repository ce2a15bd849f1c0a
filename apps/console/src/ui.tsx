import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { describe } from './api';

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

/** A sentence whose ISO 8601 instants stay on one line each (a narrow screen broke them at their hyphens). */
export function Sentence({ text }: { text: string }) {
  return (
    <>
      {text.split(INSTANT).map((part, i) =>
        i % 2 === 1 ? (
          <span key={i} class="instant">
            {part}
          </span>
        ) : (
          part
        ),
      )}
    </>
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

/** `datetime-local` values are local times; the API speaks ISO 8601 UTC. */
export function localToIso(value: string): string | undefined {
  if (value === '') return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

export function isoToLocal(value: string | null | undefined): string {
  if (!value) return '';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
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
