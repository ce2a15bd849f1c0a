import { api } from '../api';
import type { Schema, SchemaVersion } from '../types';
import { Busy, ErrorText, Time, useLoad } from '../ui';
import { type DiffLine, diffLines, diffSummary, formatSchema, MODES, stateOf } from './schema-text';

/**
 * Two versions of an action's schema side by side (stacked on a narrow screen), as JSON text: the
 * lines the right one removes are marked − on the left, those it adds + on the right (`<del>` and
 * `<ins>`, with the mark in the text, so colour is never the only cue). Which two is the page's URL
 * (`from`, `to`), chosen with the two fields.
 */
export function SchemaCompare(props: {
  base: string;
  action: string;
  versions: SchemaVersion[];
  from: number;
  to: number;
  onChoose: (from: number, to: number) => void;
}) {
  const { base, action, from, to } = props;
  const path = (n: number) => `${base}/${encodeURIComponent(action)}/versions/${n}`;
  const pair = useLoad(
    (signal) =>
      Promise.all([from, to].map((n) => api.get<{ data: Schema }>(path(n), undefined, signal).then((a) => a.data))),
    [base, action, from, to],
  );
  const choice = (label: string, value: number, onPick: (n: number) => void) => (
    <div class="field">
      <label for={`compare-${label}`}>{label === 'from' ? 'Left: version' : 'Right: version'}</label>
      <select id={`compare-${label}`} value={String(value)} onChange={(e) => onPick(Number(e.currentTarget.value))}>
        {props.versions.map((v) => (
          <option key={v.version} value={String(v.version)}>
            {`${v.version} (${v.mode})`}
          </option>
        ))}
      </select>
    </div>
  );
  const [left, right] = pair.value ?? [];
  const lines =
    left && right ? diffLines(formatSchema(left.schema).split('\n'), formatSchema(right.schema).split('\n')) : [];
  return (
    <section aria-labelledby="compare-title">
      <h2 id="compare-title">Versions side by side</h2>
      <div class="search">
        {choice('from', from, (n) => props.onChoose(n, to))}
        {choice('to', to, (n) => props.onChoose(from, n))}
      </div>
      <ErrorText error={pair.error} />
      {pair.loading && <Busy label="Loading the two versions" />}
      {left && right && (
        <>
          <p role="status">{diffSummary(lines)}</p>
          <div class="compare">
            <Pane version={left} lines={lines.filter((l) => l.kind !== 'added')} />
            <Pane version={right} lines={lines.filter((l) => l.kind !== 'removed')} />
          </div>
        </>
      )}
    </section>
  );
}

/** One version's schema as lines of text, each led by its mark. */
function Pane({ version, lines }: { version: Schema; lines: DiffLine[] }) {
  const state = MODES[stateOf(version)];
  return (
    <figure class="pane">
      <figcaption>
        <strong>Version {version.version}</strong>{' '}
        <span class={`mode mode-${stateOf(version)}`}>
          <span aria-hidden="true">{state.mark}</span> {state.words}
        </span>
        <span class="hint own-line">
          <Time iso={version.createdAt} /> by <span class="mono">{version.keyId}</span>
        </span>
      </figcaption>
      <pre class="mono schema-text" role="group" tabIndex={0} aria-label={`Schema of version ${version.version}`}>
        {lines.map((line, i) =>
          line.kind === 'removed' ? (
            <del key={i} class="line">{`− ${line.text}\n`}</del>
          ) : line.kind === 'added' ? (
            <ins key={i} class="line">{`+ ${line.text}\n`}</ins>
          ) : (
            <span key={i} class="line">{`  ${line.text}\n`}</span>
          ),
        )}
      </pre>
    </figure>
  );
}
