import { useEffect, useState } from 'preact/hooks';
import { pageAccount } from '../account';
import { describe, request } from '../api';
import { href, navigate, useLocation } from '../router';
import type { Event, StreamQuery } from '../types';
import { Page } from '../ui';
import { EventsTable, SearchForm } from './events';

const MAX_SHOWN = 500;

/**
 * Reads GET /v1/events/stream (docs/contract.md §13) with fetch and a streaming reader (EventSource cannot
 * send the Authorization header), resuming after the last event id when the connection drops.
 */
async function follow(
  q: string | undefined,
  onEvent: (e: Event) => void,
  onState: (s: string) => void,
  signal: AbortSignal,
) {
  let lastId: string | undefined;
  while (!signal.aborted) {
    try {
      const res = await request(
        'GET',
        '/v1/events/stream',
        { q, last_event_id: lastId } satisfies StreamQuery,
        undefined,
        signal,
      );
      onState('Connected: new events appear here as they are appended.');
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let data = '';
          let id: string | undefined;
          let type = 'message';
          for (const line of block.split('\n')) {
            if (line.startsWith('data:')) data += line.slice(5).trimStart();
            else if (line.startsWith('id:')) id = line.slice(3).trim();
            else if (line.startsWith('event:')) type = line.slice(6).trim();
          }
          if (id !== undefined) lastId = id;
          if (type === 'event' && data !== '') onEvent(JSON.parse(data) as Event);
        }
      }
      onState('The connection closed; reconnecting…');
    } catch (error) {
      if (signal.aborted) return;
      onState(`${describe(error)} Retrying in a few seconds…`);
    }
    await new Promise((resolve) => setTimeout(resolve, 3000));
  }
}

export function LivePage() {
  const { query } = useLocation();
  const q = query.get('q') ?? undefined;
  const [events, setEvents] = useState<Event[]>([]);
  const [state, setState] = useState('Connecting…');
  useEffect(() => {
    const controller = new AbortController();
    setEvents([]);
    setState('Connecting…');
    void follow(q, (e) => setEvents((shown) => [e, ...shown].slice(0, MAX_SHOWN)), setState, controller.signal);
    return () => controller.abort();
  }, [q, query.get('account')]);
  return (
    <Page title="Live">
      <SearchForm
        filters={{ q }}
        range={false}
        onSearch={(f) => navigate(href('/live', { q: f.q, account: pageAccount() }))}
      />
      <p role="status">{state}</p>
      <EventsTable events={events} caption={`Events as they arrive, newest first (${events.length})`} />
    </Page>
  );
}
