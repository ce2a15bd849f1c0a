import { useEffect, useState } from 'preact/hooks';
import { api, download } from '../api';
import { pageAccount } from '../account';
import { fromField, toField, useZone, zoneLabel, type Zone } from '../clock';
import { href, Link, navigate, useLocation } from '../router';
import type { Event, EventsPage as EventsAnswer, EventsQuery, ExportQuery } from '../types';
import { Busy, CardTable, type Column, Erased, ErrorText, Page, Time, TimeField } from '../ui';

const PAGE_SIZE = 50;

export interface Filters {
  q?: string;
  after?: string;
  before?: string;
}

/** The search form shared by Events and Live: `q` (docs/contract.md §13) and a time range, kept in the URL. */
export function SearchForm({
  filters,
  onSearch,
  range = true,
}: {
  filters: Filters;
  onSearch: (f: Filters) => void;
  range?: boolean;
}) {
  const z = useZone();
  const [q, setQ] = useState(filters.q ?? '');
  const [after, setAfter] = useState(toField(filters.after, z));
  const [before, setBefore] = useState(toField(filters.before, z));
  // The fields show the filters in the console's zone: a switch of zone shows the same instants anew.
  useEffect(() => {
    setQ(filters.q ?? '');
    setAfter(toField(filters.after, z));
    setBefore(toField(filters.before, z));
  }, [filters.q, filters.after, filters.before, z]);
  return (
    <form
      class="search"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        onSearch({ q: q.trim() || undefined, after: fromField(after, z), before: fromField(before, z) });
      }}
    >
      <div class="field grow">
        <label for="q">Search</label>
        <input
          id="q"
          type="search"
          value={q}
          placeholder="action:order.* -actor:system"
          maxLength={2000}
          spellcheck={false}
          onInput={(e) => setQ(e.currentTarget.value)}
        />
      </div>
      {range && (
        <>
          <TimeField id="after" label="After" value={after} onInput={setAfter} />
          <TimeField id="before" label="Before" value={before} onInput={setBefore} />
        </>
      )}
      <button type="submit">Apply</button>
    </form>
  );
}

const eventPath = (event: Event) => href(`/events/${event.id}`, { account: pageAccount() });

/** An event's actor or resource: its value, or the mark of an erased field (docs/contract.md §17). */
function fieldOf(event: Event, field: 'actor' | 'resource') {
  if (event.erased?.includes(field)) return <Erased />;
  return event[field] ?? '—';
}

const eventColumns = (z: Zone): Column<Event>[] => [
  {
    header: `Time (${zoneLabel(z)})`,
    class: 'mono lead',
    cell: (event) => (
      <Link to={eventPath(event)}>
        <Time iso={event.timestamp} />
      </Link>
    ),
  },
  { header: 'Action', class: 'lead', cell: (event) => event.action },
  { header: 'Actor', class: 'lead', cell: (event) => fieldOf(event, 'actor') },
  { header: 'Resource', cell: (event) => fieldOf(event, 'resource') },
  { header: 'Chain', cell: (event) => `${event.chain.name} #${event.chain.position}` },
];

/** Events as a table, one card per event on narrow screens; a row opens its event. */
export function EventsTable({ events, caption }: { events: Event[]; caption: string }) {
  const z = useZone();
  return (
    <CardTable
      caption={caption}
      columns={eventColumns(z)}
      rows={events}
      rowKey={(event) => event.id}
      onOpen={(event) => navigate(eventPath(event))}
    />
  );
}

export function EventsPage() {
  const { query } = useLocation();
  const filters: Filters = {
    q: query.get('q') ?? undefined,
    after: query.get('after') ?? undefined,
    before: query.get('before') ?? undefined,
  };
  const [events, setEvents] = useState<Event[]>([]);
  const [cursor, setCursor] = useState<string | undefined>();
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const [exported, setExported] = useState<string | null>(null);

  const load = async (from: string | undefined, signal?: AbortSignal) => {
    setLoading(true);
    setError(null);
    try {
      const page = await api.get<EventsAnswer>(
        '/v1/events',
        {
          q: filters.q,
          after: filters.after,
          before: filters.before,
          limit: PAGE_SIZE,
          cursor: from,
        } satisfies EventsQuery,
        signal,
      );
      setEvents((shown) => (from === undefined ? page.data : [...shown, ...page.data]));
      setCursor(page.nextCursor);
    } catch (e) {
      if (!signal?.aborted) setError(e);
    } finally {
      if (!signal?.aborted) setLoading(false);
    }
  };

  useEffect(() => {
    const controller = new AbortController();
    setEvents([]);
    void load(undefined, controller.signal);
    return () => controller.abort();
  }, [filters.q, filters.after, filters.before, query.get('account')]);

  const exportAs = async (format: 'csv' | 'json') => {
    setExported(null);
    setError(null);
    try {
      const name = await download('/v1/events/export', {
        format,
        q: filters.q,
        // The export needs a period (docs/contract.md §4): the chosen range, else everything up to now.
        after: filters.after ?? '1970-01-01T00:00:00.000Z',
        before: filters.before ?? new Date().toISOString(),
      } satisfies ExportQuery);
      setExported(`Downloaded ${name}.`);
    } catch (e) {
      setError(e);
    }
  };

  return (
    <Page title="Events">
      <SearchForm filters={filters} onSearch={(f) => navigate(href('/events', { ...f, account: pageAccount() }))} />
      <details class="menu">
        <summary>Export</summary>
        <div class="menu-items">
          <button type="button" onClick={() => void exportAs('csv')}>
            CSV
          </button>
          <button type="button" onClick={() => void exportAs('json')}>
            JSON
          </button>
        </div>
      </details>
      {exported && <p role="status">{exported}</p>}
      <ErrorText error={error} />
      <EventsTable events={events} caption={`Events, newest first (${events.length} shown)`} />
      {loading && <Busy label="Loading events" />}
      {!loading && events.length === 0 && !error && <p>No events match.</p>}
      {cursor && !loading && (
        <button type="button" onClick={() => void load(cursor)}>
          Load more
        </button>
      )}
    </Page>
  );
}
