import { useState } from 'preact/hooks';
import type { DestinationFormat, DestinationKind, NewDestinationBody } from '../types';
import { DeliveryFields, FormatField, NameField } from './destination-fields';
import { formatsFor, KINDS, URL_EXAMPLES } from './destination-text';

/**
 * The create form of a destination (docs/contract.md §16): the fields every kind has, and the kind's own
 * credentials. Limits here only spare a person a round trip; the service checks every field, and
 * its refusal is shown in words by the page.
 */
export function DestinationForm({ busy, onCreate }: { busy: boolean; onCreate: (body: NewDestinationBody) => void }) {
  const [name, setName] = useState('');
  const [kind, setKind] = useState<DestinationKind>('webhook');
  const [url, setUrl] = useState('');
  const [format, setFormat] = useState<DestinationFormat>('native');
  const [q, setQ] = useState('');
  const [batchSize, setBatchSize] = useState('100');
  const [start, setStart] = useState<'now' | 'beginning'>('now');
  const [token, setToken] = useState('');
  const [sourcetype, setSourcetype] = useState('');
  const [index, setIndex] = useState('');
  const [apiKey, setApiKey] = useState('');
  const formats = formatsFor(kind);
  const chooseKind = (next: DestinationKind) => {
    setKind(next);
    if (!formatsFor(next).includes(format)) setFormat('native');
  };
  const submit = () => {
    const body: NewDestinationBody = { name: name.trim(), kind, url: url.trim(), format, start };
    if (q.trim() !== '') body.q = q.trim();
    if (batchSize !== '') body.batchSize = Number(batchSize);
    if (kind === 'splunk_hec') {
      body.token = token;
      if (sourcetype.trim() !== '') body.sourcetype = sourcetype.trim();
      if (index.trim() !== '') body.index = index.trim();
    }
    if (kind === 'datadog') body.apiKey = apiKey;
    onCreate(body);
  };
  return (
    <form
      class="search"
      aria-labelledby="new-destination"
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <h2 id="new-destination" class="form-title">
        New destination
      </h2>
      <NameField id="dst" value={name} onInput={setName} />
      <div class="field">
        <label for="dst-kind">Kind</label>
        <select id="dst-kind" value={kind} onChange={(e) => chooseKind(e.currentTarget.value as DestinationKind)}>
          {KINDS.map((k) => (
            <option key={k.kind} value={k.kind}>
              {k.label}
            </option>
          ))}
        </select>
      </div>
      <div class="field grow">
        <label for="dst-url">URL</label>
        <input
          id="dst-url"
          value={url}
          required
          maxLength={2048}
          inputMode="url"
          spellcheck={false}
          autoComplete="off"
          placeholder={URL_EXAMPLES[kind]}
          onInput={(e) => setUrl(e.currentTarget.value)}
        />
      </div>
      <FormatField id="dst" formats={formats} value={format} onChange={setFormat} />
      <DeliveryFields
        id="dst"
        qLabel="Only events matching (optional)"
        q={q}
        onQ={setQ}
        batchSize={batchSize}
        onBatchSize={setBatchSize}
      />
      {kind === 'splunk_hec' && (
        <>
          <Secret id="dst-token" label="Splunk HEC token" value={token} onInput={setToken} />
          <div class="field">
            <label for="dst-sourcetype">Sourcetype (optional)</label>
            <input
              id="dst-sourcetype"
              value={sourcetype}
              maxLength={100}
              onInput={(e) => setSourcetype(e.currentTarget.value)}
            />
          </div>
          <div class="field">
            <label for="dst-index">Index (optional)</label>
            <input id="dst-index" value={index} maxLength={100} onInput={(e) => setIndex(e.currentTarget.value)} />
          </div>
        </>
      )}
      {kind === 'datadog' && <Secret id="dst-api-key" label="Datadog API key" value={apiKey} onInput={setApiKey} />}
      <fieldset class="scopes">
        <legend>Start with</legend>
        <label>
          <input type="radio" name="dst-start" checked={start === 'now'} onChange={() => setStart('now')} /> events from
          now on
        </label>
        <label>
          <input type="radio" name="dst-start" checked={start === 'beginning'} onChange={() => setStart('beginning')} />{' '}
          every retained event
        </label>
      </fieldset>
      <button type="submit" disabled={busy}>
        Create destination
      </button>
    </form>
  );
}

/** A credential field: typed, never shown back, never remembered by the browser. */
function Secret(props: { id: string; label: string; value: string; onInput: (value: string) => void }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <input
        id={props.id}
        type="password"
        required
        maxLength={1000}
        autoComplete="off"
        value={props.value}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
    </div>
  );
}
