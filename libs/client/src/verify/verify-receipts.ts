import { eventLeafHash, HEX_HASH, merkleRoot } from '@app/hashing';
import { AuditTrailError, AuditTrailVerificationError } from '../errors';
import type { ChainsResource } from '../resources/chains';
import type { EventsResource } from '../resources/events';
import type { AuditEvent, Receipt } from '../types';
import { CheckedCheckpoint, CheckpointCache } from './checkpoint-cache';
import { checkEventHash, checkpointCovering, Trust, trustOf, UncoveredError, verifyWithTrust } from './receipt-checks';
import type { ReceiptCheck, VerifyReceiptOptions } from './verify-receipt';

/** One receipt's outcome in verifyReceipts: its check, or what failed (a check, or a call). */
export type ReceiptVerdict =
  | { receipt: Receipt; ok: true; check: ReceiptCheck }
  | { receipt: Receipt; ok: false; error: AuditTrailVerificationError | AuditTrailError };

export interface VerifyReceiptsOptions extends VerifyReceiptOptions {
  /** Receipts verified one by one at once, at most (default 16). */
  concurrency?: number;
}

/** GET /v1/events's largest page (docs/contract.md §4). */
const PAGE = 200;
/** A chain is read whole only up to this many events (its hashes are held in memory while read). */
const MAX_WHOLE_CHAIN = 1_000_000;

/**
 * Many receipts at once, each with the verdict verifyReceipt would give. Per chain, the checkpoint
 * is fetched and checked once (the cache); then, when the receipts are dense in the chain (a page
 * of 200 events per two receipts or fewer), the chain's events up to the checkpoint's size are read
 * through GET /v1/events?chain_id (pages of 200) and its Merkle root is rebuilt from their hashes:
 * equal to the signed root, every listed event is the signed tree's leaf at its position, which
 * proves every receipt's inclusion at once; each receipt's event hash is then recomputed from the
 * listed event. A root that differs, a chain missing events (pruned by retention) or sparse
 * receipts fall back to verifyReceipt per receipt (an event and an inclusion proof each), which
 * names the receipts that fail. Rejects only for bad options or an error that is not the service's.
 */
export async function verifyReceipts(
  client: { events: EventsResource; chains: ChainsResource },
  receipts: readonly Receipt[],
  options: VerifyReceiptsOptions,
  cache: CheckpointCache,
): Promise<ReceiptVerdict[]> {
  const trust = trustOf(options);
  const concurrency = options.concurrency ?? 16;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new TypeError('concurrency must be an integer ≥ 1');
  const verdicts = new Map<Receipt, ReceiptVerdict>();
  const oneByOne: Receipt[] = [];
  for (const group of byChain(receipts)) {
    const whole = await wholeChain(client, group, trust, cache).catch(verdictOf);
    if (whole === null) oneByOne.push(...group);
    else if ('ok' in whole) group.forEach((receipt) => verdicts.set(receipt, { ...whole, receipt }));
    else whole.forEach((v) => verdicts.set(v.receipt, v));
  }
  await pooled(oneByOne, concurrency, async (receipt) => {
    const check = await verifyWithTrust(client, receipt, trust, cache).catch(verdictOf);
    verdicts.set(receipt, 'ok' in check ? { ...check, receipt } : { receipt, ok: true, check });
  });
  return receipts.map((r) => verdicts.get(r)!);
}

/** The failure of a check or a call as a verdict (without its receipt); anything else is thrown. */
function verdictOf(error: unknown): { ok: false; error: AuditTrailVerificationError | AuditTrailError } {
  if (error instanceof AuditTrailVerificationError || error instanceof AuditTrailError) return { ok: false, error };
  throw error;
}

function byChain(receipts: readonly Receipt[]): Receipt[][] {
  const groups = new Map<string, Receipt[]>();
  for (const r of receipts) groups.set(r.chainId, [...(groups.get(r.chainId) ?? []), r]);
  return [...groups.values()];
}

/**
 * The verdicts of a chain's receipts from the chain read whole, or null when that is not the
 * cheaper way or does not prove them (then each is verified alone).
 */
async function wholeChain(
  client: { events: EventsResource; chains: ChainsResource },
  group: Receipt[],
  trust: Trust,
  cache: CheckpointCache,
): Promise<ReceiptVerdict[] | null> {
  // A receipt at a position no tree has is for verifyReceipt alone (its inclusion fails there).
  if (!group.every((r) => Number.isSafeInteger(r.position) && r.position >= 1)) return null;
  const highest = group.reduce((max, r) => Math.max(max, r.position), 0);
  const covering = { chainId: group[0]!.chainId, position: highest };
  const checked = await checkpointCovering(client.chains, covering, trust, cache).catch((error: unknown) => {
    // Some receipts lie beyond the checkpoint: one by one, each gets its own verdict.
    if (error instanceof UncoveredError) return null;
    throw error;
  });
  if (checked === null) return null;
  const size = checked.checkpoint.size;
  if (size > MAX_WHOLE_CHAIN || size > 2 * PAGE * group.length) return null;
  const hashes: (string | undefined)[] = new Array<string | undefined>(size);
  const wanted = new Map(group.map((r) => [r.position, r]));
  const served = new Map<number, AuditEvent>();
  let filled = 0;
  const chainId = group[0]!.chainId;
  for await (const event of client.events.list({ chain_id: chainId, limit: PAGE })) {
    const position = event.chain.position;
    // A listed event that cannot be a leaf of this chain's tree: the listing proves nothing (one by one).
    if (event.chain.id !== chainId || !Number.isSafeInteger(position) || position < 1 || !HEX_HASH.test(event.hash))
      return null;
    if (position > size || hashes[position - 1] !== undefined) continue;
    hashes[position - 1] = event.hash;
    if (wanted.has(position)) served.set(position, event);
    if (++filled === size) break;
  }
  if (filled < size) return null;
  const root = merkleRoot((hashes as string[]).map(eventLeafHash)).toString('hex');
  if (root !== checked.checkpoint.hash) return null;
  return group.map((receipt) => verdictFromListed(receipt, served.get(receipt.position)!, checked));
}

function verdictFromListed(receipt: Receipt, event: AuditEvent, checked: CheckedCheckpoint): ReceiptVerdict {
  try {
    const hashVersion = checkEventHash(receipt, event);
    const { chainId, size, hash } = checked.checkpoint;
    const check = {
      checkpoint: { chainId, size, hash },
      hashVersion,
      witnessedBy: checked.witnessedBy,
      trustedSize: checked.trustedSize,
    };
    return { receipt, ok: true, check };
  } catch (error) {
    return { receipt, ...verdictOf(error) };
  }
}

/** Runs `work` over `items`, at most `limit` at once. */
async function pooled<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
