/** An event as a receiver got it. */
interface Received {
  id: string;
  chain: { id: string; position: number };
}

/** How a receiver's events compare with the acknowledged ones. */
export interface DeliveryCheck {
  /** Acknowledged events it never got. */
  missing: string[];
  /** Events it got more than once (counted beyond the first). */
  duplicates: number;
  /**
   * First receipts whose position is not the one right after the chain's previous first receipt
   * (out of order, or something skipped): every chain of the drill starts at 1 under the receiver.
   */
  notNext: number;
}

/** Compares what a receiver got, in arrival order, with the acknowledged ids. */
export function checkDelivery(received: Received[], acknowledged: Iterable<string>): DeliveryCheck {
  const seen = new Set<string>();
  const last = new Map<string, number>();
  let duplicates = 0;
  let notNext = 0;
  for (const event of received) {
    if (seen.has(event.id)) {
      duplicates++;
      continue;
    }
    seen.add(event.id);
    if (event.chain.position !== (last.get(event.chain.id) ?? 0) + 1) notNext++;
    last.set(event.chain.id, event.chain.position);
  }
  return { missing: [...acknowledged].filter((id) => !seen.has(id)), duplicates, notNext };
}
