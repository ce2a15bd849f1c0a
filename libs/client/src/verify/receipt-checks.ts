import {
  ChainCheckpoint,
  eventLeafHash,
  hashByVersion,
  NoteFormatError,
  NoteVerifier,
  parseCosignatureVerifierKey,
  parseVerifierKey,
  rootFromInclusionProof,
  verifyChainCheckpoint,
  verifyConsistency,
} from '@app/hashing';
import { hashFailure } from '@app/verification';
import { AuditTrailError, AuditTrailVerificationError } from '../errors';
import type { ChainsResource } from '../resources/chains';
import type { EventsResource } from '../resources/events';
import type { AuditEvent, Receipt } from '../types';
import { CheckedCheckpoint, CheckpointCache, VerifiedCheckpoint } from './checkpoint-cache';
import type { ReceiptCheck, VerifyReceiptOptions } from './verify-receipt';
import { TrustStore, withChainLock } from './trust-store';
import { checkWitnessedBundle } from './witnessed-bundle';

/*
 * The checks behind verifyReceipt and verifyReceipts (not part of the package's types: they name
 * libs/hashing's).
 */

/**
 * The chain's checkpoint (the witnessed one, with witnesses) does not reach the receipt's position
 * yet: a failure now, which the background checker tries again later (witnessing lags the chain).
 */
export class UncoveredError extends AuditTrailVerificationError {}

export const DEFAULT_CHECKPOINT_MAX_AGE_MS = 10_000;

/** The options parsed once: the keys, the witnesses and quorum, and the cache scope they make. */
export interface Trust {
  keys: NoteVerifier[];
  witnesses: NoteVerifier[];
  quorum: number;
  trustDir: string | null;
  maxAgeMs: number;
  scope: string;
}

/** Parsed keys by the options' text: a key is parsed (createPublicKey) once, not per receipt. */
const parsed = new Map<string, Omit<Trust, 'maxAgeMs'>>();
const MAX_PARSED = 100;

export function trustOf(options: VerifyReceiptOptions): Trust {
  const maxAgeMs = options.checkpointMaxAgeMs ?? DEFAULT_CHECKPOINT_MAX_AGE_MS;
  if (!(maxAgeMs >= 0)) throw new TypeError('checkpointMaxAgeMs must be a number ≥ 0');
  const text = JSON.stringify([options.key, options.witnesses ?? [], options.quorum ?? null, options.trustDir ?? null]);
  let trust = parsed.get(text);
  if (!trust) {
    trust = parseTrust(options);
    if (parsed.size >= MAX_PARSED) parsed.delete(parsed.keys().next().value!);
    parsed.set(text, trust);
  }
  return { ...trust, maxAgeMs };
}

function parseTrust(options: VerifyReceiptOptions): Omit<Trust, 'maxAgeMs'> {
  const keys = verifierKeys(options.key, parseVerifierKey, 'key');
  const witnesses = options.witnesses?.length
    ? verifierKeys(options.witnesses, parseCosignatureVerifierKey, 'witnesses')
    : [];
  const quorum = options.quorum ?? witnesses.length;
  if (witnesses.length > 0 && (!Number.isSafeInteger(quorum) || quorum < 1 || quorum > witnesses.length))
    throw new TypeError(`quorum must be an integer from 1 to the number of witnesses (${witnesses.length})`);
  const trustDir = options.trustDir ?? null;
  const scope = JSON.stringify([
    typeof options.key === 'string' ? [options.key] : options.key,
    options.witnesses ?? [],
    quorum,
    trustDir,
  ]);
  return { keys, witnesses, quorum, trustDir, scope };
}

function publicView(checkpoint: ChainCheckpoint): VerifiedCheckpoint {
  return { chainId: checkpoint.chainId, size: checkpoint.size, hash: checkpoint.hash };
}

/** RFC 9162: the proof leads from the receipt's hash at its position to the root the checkpoint signed. */
export function checkInclusion(receipt: Receipt, checkpoint: ChainCheckpoint, proof: readonly string[]): void {
  const root = rootFromInclusionProof(
    receipt.position - 1,
    checkpoint.size,
    eventLeafHash(receipt.hash),
    proof.map((h) => Buffer.from(h, 'hex')),
  );
  if (root === null || root.toString('hex') !== checkpoint.hash)
    fail(
      'inclusion',
      `the proof does not lead from the event's hash at position ${receipt.position} to the root the checkpoint signed at size ${checkpoint.size}`,
    );
}

function fail(reason: AuditTrailVerificationError['reason'], message: string): never {
  throw new AuditTrailVerificationError(reason, message);
}

function verifierKeys(
  given: string | readonly string[],
  parse: (vkey: string) => NoteVerifier,
  option: string,
): NoteVerifier[] {
  try {
    return (typeof given === 'string' ? [given] : [...given]).map((k) => parse(k));
  } catch (error) {
    if (error instanceof NoteFormatError) throw new TypeError(`${option}: ${error.message}`);
    throw error;
  }
}

/** The served event is the receipt's, and its hash follows from what is served (§3, §17). */
export function checkEventHash(receipt: Receipt, event: AuditEvent): 1 | 2 {
  const { chain } = event;
  if (event.id !== receipt.id || chain.id !== receipt.chainId || chain.position !== receipt.position)
    fail(
      'hash',
      `the service serves event ${event.id} at ${chain.id}#${chain.position} for the receipt of ${receipt.id} at ${receipt.chainId}#${receipt.position}`,
    );
  if (event.hash !== receipt.hash)
    fail('hash', `the service now serves hash ${event.hash} for event ${receipt.id}; the receipt says ${receipt.hash}`);
  const payload = {
    id: event.id,
    chainId: chain.id,
    position: chain.position,
    actor: event.actor,
    action: event.action,
    resource: event.resource,
    context: event.context,
    timestamp: event.timestamp,
    previousHash: event.previousHash,
  };
  const problem = hashFailure(receipt, hashByVersion(payload, event.hashing ?? null));
  if (problem !== null) fail('hash', problem);
  return event.hashing ? 2 : 1;
}

/**
 * A checkpoint of the receipt's chain that covers its position: cached, or fetched and checked
 * (signature, witnesses' quorum, consistency with the trusted one) once per new note.
 */
export async function checkpointCovering(
  chains: ChainsResource,
  receipt: Pick<Receipt, 'chainId' | 'position'>,
  trust: Trust,
  cache: CheckpointCache,
): Promise<CheckedCheckpoint> {
  const checked = await cache.covering(
    `${trust.scope}\n${receipt.chainId}`,
    receipt.position,
    trust.maxAgeMs,
    (cached) => fetchChecked(chains, receipt.chainId, trust, cached),
  );
  if (checked.checkpoint.size < receipt.position) {
    const witnessed = trust.witnesses.length > 0;
    throw new UncoveredError(
      witnessed ? 'witnesses' : 'inclusion',
      `the ${witnessed ? 'witnessed ' : ''}checkpoint has size ${checked.checkpoint.size}, before the event's position ${receipt.position}`,
    );
  }
  return checked;
}

/** The chain's checkpoint, signed by a pinned key; with witnesses, the latest one a quorum witnessed. */
async function fetchChecked(
  chains: ChainsResource,
  chainId: string,
  trust: Trust,
  cached: CheckedCheckpoint | null,
): Promise<CheckedCheckpoint> {
  let note: string;
  let witnessedBy: string[] = [];
  if (trust.witnesses.length > 0) {
    const bundle = await chains.witnessedCheckpoint(chainId).catch((error: unknown) => {
      if (error instanceof AuditTrailError && error.status === 404)
        fail('witnesses', `no checkpoint of chain ${chainId} is witnessed yet (404)`);
      throw error;
    });
    if (cached && bundle.checkpoint === cached.note) return { ...cached, at: Date.now() };
    witnessedBy = checkWitnessedBundle(bundle, trust.keys, trust.witnesses, trust.quorum).cosigners;
    note = bundle.checkpoint;
  } else {
    note = await chains.checkpoint(chainId);
    if (cached && note === cached.note) return { ...cached, at: Date.now() };
  }
  const opened = verifyChainCheckpoint(note, trust.keys);
  if (!opened.ok) fail('signature', `the checkpoint of chain ${chainId}: ${opened.message}`);
  const checkpoint = opened.checkpoint;
  if (checkpoint.chainId !== chainId)
    fail('signature', `the checkpoint served for chain ${chainId} is of chain ${checkpoint.chainId}`);
  const trustDir = trust.trustDir;
  const trustedSize = trustDir
    ? await withChainLock(`${trustDir}\n${chainId}`, () =>
        holdToTrusted(chains, new TrustStore(trustDir), trust.keys, checkpoint, note),
      )
    : null;
  return { checkpoint, note, witnessedBy, trustedSize, at: Date.now() };
}

/**
 * The checkpoint against the one trusted for its chain: a newer one must extend it (a consistency
 * proof from the trusted size; then it becomes the trusted one), an older one must be extended by
 * it, one of the same size must have the same root. The trusted file's signature is checked again.
 */
async function holdToTrusted(
  chains: ChainsResource,
  store: TrustStore,
  keys: NoteVerifier[],
  checkpoint: ChainCheckpoint,
  note: string,
): Promise<number | null> {
  const trustedNote = await store.read(checkpoint.chainId);
  if (trustedNote === null) {
    await store.write(checkpoint.chainId, note);
    return null;
  }
  const opened = verifyChainCheckpoint(trustedNote, keys);
  if (!opened.ok)
    fail('consistency', `the trusted checkpoint of chain ${checkpoint.chainId} no longer verifies: ${opened.message}`);
  const trusted = opened.checkpoint;
  const [older, newer] = trusted.size <= checkpoint.size ? [trusted, checkpoint] : [checkpoint, trusted];
  if (older.size === newer.size) {
    if (older.hash !== newer.hash)
      fail(
        'consistency',
        `two checkpoints of chain ${checkpoint.chainId} at size ${older.size} sign different roots: its history was rewritten`,
      );
    return trusted.size;
  }
  const proof = await chains.consistency(checkpoint.chainId, older.size, newer.size).catch((error: unknown) => {
    if (error instanceof AuditTrailError && error.status >= 400 && error.status < 500)
      fail(
        'consistency',
        `the service gives no consistency proof from size ${older.size} to ${newer.size}: ${error.message}`,
      );
    throw error;
  });
  const hashes = proof.proof.map((h) => Buffer.from(h, 'hex'));
  if (
    !verifyConsistency(older.size, newer.size, Buffer.from(older.hash, 'hex'), Buffer.from(newer.hash, 'hex'), hashes)
  )
    fail(
      'consistency',
      `the checkpoint of chain ${checkpoint.chainId} at size ${newer.size} does not extend the one at size ${older.size}: its history was rewritten`,
    );
  if (newer === checkpoint) await store.write(checkpoint.chainId, note);
  return trusted.size;
}

/**
 * docs/contract.md §20: the event's hash recomputed from what the service serves (version 1 or 2,
 * libs/hashing), its RFC 9162 inclusion in the tree of a checkpoint signed by the pinned key
 * (the proof's own roots are never read), the witnessed bundle's quorum when witness keys are
 * given, and with trustDir the consistency of that checkpoint with the last one trusted. Each
 * failure rejects with AuditTrailVerificationError naming the check; a call the service refuses
 * or that gets no answer rejects with AuditTrailError. The checkpoint comes from `cache` while a
 * verified one covers the receipt (checkpointMaxAgeMs): then a receipt costs the event and its
 * proof, fetched together, and hashing.
 */
export async function verifyWithTrust(
  client: { events: EventsResource; chains: ChainsResource },
  receipt: Receipt,
  trust: Trust,
  cache: CheckpointCache,
): Promise<ReceiptCheck> {
  const served = client.events.get(receipt.id);
  const covering = checkpointCovering(client.chains, receipt, trust, cache);
  // Both under way at once; failures are reported in the order of the checks (hash first).
  const proven = covering.then((checked) => client.events.proof(receipt.id, checked.checkpoint.size));
  proven.catch(() => undefined);
  const hashVersion = checkEventHash(receipt, await served);
  const { checkpoint, witnessedBy, trustedSize } = await covering;
  checkInclusion(receipt, checkpoint, (await proven).proof);
  return { checkpoint: publicView(checkpoint), hashVersion, witnessedBy, trustedSize };
}
