import { Page } from '@app/auth';
import { DestinationRow } from '@app/database';
import { DestinationView, NewDestinationView } from './dto/destination.view';

const iso = (date: Date | null): string | null => date?.toISOString() ?? null;

/**
 * How far behind a destination is: 0 when active and caught up, else seconds since the timestamp
 * of the last event delivered, or null before any delivery.
 */
export function lagSeconds(row: DestinationRow, now = Date.now()): number | null {
  if (row.state === 'active' && row.caughtUp) return 0;
  if (row.lastDeliveredEventAt === null) return null;
  return Math.max(0, now - row.lastDeliveredEventAt.getTime()) / 1000;
}

/** The one place a destination row becomes its wire shape: never its sealed credentials, options or position. */
export function toDestinationView(row: DestinationRow): DestinationView {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    url: row.url,
    format: row.format,
    q: row.q,
    batchSize: row.batchSize,
    timeoutSeconds: row.timeoutSeconds,
    state: row.state,
    createdAt: row.createdAt.toISOString(),
    start: row.start,
    deliveredEvents: row.deliveredEvents,
    lastDeliveredAt: iso(row.lastDeliveredAt),
    lastDeliveredEventAt: iso(row.lastDeliveredEventAt),
    lagSeconds: lagSeconds(row),
    consecutiveFailures: row.consecutiveFailures,
    lastError: row.lastError && { at: row.lastError.at, status: row.lastError.status, message: row.lastError.message },
  };
}

export const destinationBody = (row: DestinationRow): { data: DestinationView } => ({ data: toDestinationView(row) });

export const destinationsBody = ({
  items,
  nextCursor,
}: Page<DestinationRow>): { data: DestinationView[]; nextCursor?: string } => ({
  data: items.map(toDestinationView),
  ...(nextCursor ? { nextCursor } : {}),
});

/** A webhook's new signing secret is in this answer only (none for other kinds). */
export const newDestinationBody = (row: DestinationRow, secret: string | null): { data: NewDestinationView } => ({
  data: { ...toDestinationView(row), ...(secret === null ? {} : { secret }) },
});
