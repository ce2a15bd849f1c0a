import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api';
import type { DestinationsPage, DestinationsQuery } from '../types';

/** How often the list is read again while the page is in sight: lag and state move on their own. */
const REFRESH_MS = 5_000;

/**
 * One page of destinations, read again every few seconds. Unlike `useLoad`, the rows stay while a
 * new read runs, so a refresh neither flickers nor takes the keyboard focus off a button.
 */
export function useDestinations(base: string, cursor: string | undefined) {
  const [state, setState] = useState<{ page?: DestinationsPage; error?: unknown }>({});
  const running = useRef<AbortController | null>(null);
  const refresh = useCallback(async () => {
    running.current?.abort();
    const controller = new AbortController();
    running.current = controller;
    try {
      const page = await api.get<DestinationsPage>(
        base,
        { limit: 100, cursor } satisfies DestinationsQuery,
        controller.signal,
      );
      if (!controller.signal.aborted) setState({ page });
    } catch (error) {
      if (!controller.signal.aborted) setState((shown) => ({ ...shown, error }));
    }
  }, [base, cursor]);
  useEffect(() => {
    setState({});
    void refresh();
    const timer = setInterval(() => {
      if (!document.hidden) void refresh();
    }, REFRESH_MS);
    return () => {
      clearInterval(timer);
      running.current?.abort();
    };
  }, [refresh]);
  return { ...state, loading: !state.page && state.error === undefined, refresh };
}
