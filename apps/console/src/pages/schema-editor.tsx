import { useState } from 'preact/hooks';
import { api } from '../api';
import { href, Link } from '../router';
import type { PreviewSchemaBody, PutSchemaBody, Schema, SchemaMode, SchemaPreview } from '../types';
import { CardTable, type Column, ErrorText } from '../ui';
import { MODES, parseSchema, previewSentence } from './schema-text';

/** A new schema's starting text: the shape every schema describes. */
export const STARTER = JSON.stringify(
  {
    type: 'object',
    properties: { context: { type: 'object', properties: {}, required: [] } },
    required: ['context'],
  },
  null,
  2,
);

type PreviewExample = SchemaPreview['examples'][number];

/** A preview's answer, and the action and text it was asked for: Save waits for one of the text shown. */
interface Previewed {
  action: string;
  text: string;
  result: SchemaPreview;
}

/**
 * The editor of an action's next schema version (docs/contract.md §19): the action (fixed when it
 * edits one), the mode, the JSON text. Save stays disabled until **Preview** has run on exactly
 * this action and text (`POST …/preview`: how many of the action's latest events it would reject,
 * and the first of them), so enforcing is never a surprise; any change of either asks again.
 */
export function SchemaEditor(props: {
  base: string;
  /** The account an operator reads (`?account=`), kept on the links to events. */
  account: string | undefined;
  action?: string;
  text: string;
  mode: SchemaMode;
  nextVersion?: number;
  onSaved: (saved: Schema) => void;
}) {
  const [action, setAction] = useState(props.action ?? '');
  const [text, setText] = useState(props.text);
  const [mode, setMode] = useState<SchemaMode>(props.mode);
  const [previewed, setPreviewed] = useState<Previewed | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const fixed = props.action !== undefined;
  const named = action.trim();
  // The preview of exactly this action and text, if it ran: only then may it be saved.
  const shown = previewed !== null && previewed.action === named && previewed.text === text ? previewed : null;
  const current = shown !== null;
  const path = (verb = '') => `${props.base}/${encodeURIComponent(named)}${verb}`;

  const run = async (work: () => Promise<void>) => {
    if (busy) return;
    setError(null);
    const parsed = parseSchema(text);
    if (named === '') return setError('Name the action (invoice.approve) or a prefix ending in .* (invoice.*).');
    if ('problem' in parsed) return setError(parsed.problem);
    setBusy(true);
    try {
      await work();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const preview = () =>
    void run(async () => {
      const schema = (parseSchema(text) as { schema: Record<string, unknown> }).schema;
      const answer = await api.send<{ data: SchemaPreview }>('POST', path('/preview'), {
        schema,
      } satisfies PreviewSchemaBody);
      setPreviewed({ action: named, text, result: answer.data });
    });
  const save = () =>
    void run(async () => {
      const schema = (parseSchema(text) as { schema: Record<string, unknown> }).schema;
      const saved = await api.send<{ data: Schema }>('PUT', path(), { schema, mode } satisfies PutSchemaBody);
      props.onSaved(saved.data);
    });

  const examples: Column<PreviewExample>[] = [
    {
      header: 'Event',
      class: 'mono lead',
      cell: (e) => (
        <Link to={href(`/events/${encodeURIComponent(e.eventId)}`, { account: props.account })}>{e.eventId}</Link>
      ),
    },
    { header: 'Field', class: 'mono', cell: (e) => e.field || '(the event)' },
    { header: 'Why', cell: (e) => e.message },
  ];
  const id = fixed ? 'edit' : 'new';
  return (
    <form
      class="schema-editor"
      aria-labelledby={`${id}-schema-title`}
      onSubmit={(e) => {
        e.preventDefault();
        if (current) save();
        else preview();
      }}
    >
      <h2 id={`${id}-schema-title`}>
        {fixed
          ? `Next version of ${props.action}${props.nextVersion ? ` (version ${props.nextVersion})` : ''}`
          : 'New schema'}
      </h2>
      {!fixed && (
        <div class="field">
          <label for="schema-action">Action</label>
          <input
            id="schema-action"
            value={action}
            required
            maxLength={256}
            spellcheck={false}
            placeholder="invoice.approve or invoice.*"
            onInput={(e) => setAction(e.currentTarget.value)}
          />
        </div>
      )}
      <fieldset class="scopes">
        <legend>Mode</legend>
        {(['warn', 'enforce'] as const).map((m) => (
          <label key={m}>
            <input type="radio" name={`${id}-mode`} value={m} checked={mode === m} onChange={() => setMode(m)} />{' '}
            {MODES[m].words}: {MODES[m].means}
          </label>
        ))}
      </fieldset>
      <div class="field">
        <label for={`${id}-schema-text`}>Schema (JSON Schema 2020-12 of the event’s actor, resource and context)</label>
        <textarea
          id={`${id}-schema-text`}
          class="mono"
          rows={14}
          spellcheck={false}
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
        />
      </div>
      <ErrorText error={error} />
      {shown && (
        <section class="preview" aria-labelledby={`${id}-preview-title`}>
          <h3 id={`${id}-preview-title`}>Preview</h3>
          <p role="status">
            {previewSentence(shown.action, shown.result)}
            {shown.result.rejected > 0 && ' Under enforce they would be refused; under warn, stored and counted.'}
          </p>
          {shown.result.examples.length > 0 && (
            <CardTable
              caption={`The first ${shown.result.examples.length} it would reject, newest first`}
              columns={examples}
              rows={shown.result.examples}
              rowKey={(e) => e.eventId}
            />
          )}
        </section>
      )}
      <div class="actions">
        <button type="button" aria-disabled={busy} onClick={preview}>
          Preview against recent events
        </button>
        <button type="button" disabled={!current} aria-describedby={`${id}-save-hint`} onClick={save}>
          {props.nextVersion ? `Save version ${props.nextVersion}` : 'Save version'}
        </button>
        <span id={`${id}-save-hint`} class="hint">
          {current ? `Saves as ${mode}.` : 'Save is enabled once the preview has run on this text.'}
        </span>
      </div>
    </form>
  );
}
