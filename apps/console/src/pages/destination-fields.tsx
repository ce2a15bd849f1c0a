import type { DestinationFormat } from '../types';

/**
 * The fields a destination's create form and its edit panel share (docs/contract.md §16): name,
 * format, the events it takes (`q`) and its batch size. `id` prefixes each control's id, so both
 * forms can be on the page at once. Limits here only spare a person a round trip: the service checks
 * every field.
 */
type Text = { id: string; value: string; onInput: (value: string) => void };

export function NameField({ id, value, onInput }: Text) {
  return (
    <div class="field grow">
      <label for={`${id}-name`}>Name</label>
      <input id={`${id}-name`} value={value} required maxLength={100} onInput={(e) => onInput(e.currentTarget.value)} />
    </div>
  );
}

export function FormatField(props: {
  id: string;
  formats: readonly DestinationFormat[];
  value: DestinationFormat;
  onChange: (value: DestinationFormat) => void;
}) {
  return (
    <div class="field">
      <label for={`${props.id}-format`}>Format</label>
      <select
        id={`${props.id}-format`}
        value={props.value}
        onChange={(e) => props.onChange(e.currentTarget.value as DestinationFormat)}
      >
        {props.formats.map((f) => (
          <option key={f} value={f}>
            {f}
          </option>
        ))}
      </select>
    </div>
  );
}

/** `q` and the batch size: which events, and how many a delivery carries. */
export function DeliveryFields(props: {
  id: string;
  qLabel: string;
  q: Text['value'];
  onQ: Text['onInput'];
  batchSize: string;
  onBatchSize: Text['onInput'];
}) {
  return (
    <>
      <div class="field grow">
        <label for={`${props.id}-q`}>{props.qLabel}</label>
        <input
          id={`${props.id}-q`}
          value={props.q}
          maxLength={2000}
          spellcheck={false}
          placeholder="action:order.* -actor:system"
          onInput={(e) => props.onQ(e.currentTarget.value)}
        />
      </div>
      <div class="field">
        <label for={`${props.id}-batch`}>Batch size</label>
        <input
          id={`${props.id}-batch`}
          type="number"
          min={1}
          max={1000}
          step={1}
          value={props.batchSize}
          onInput={(e) => props.onBatchSize(e.currentTarget.value)}
        />
      </div>
    </>
  );
}
