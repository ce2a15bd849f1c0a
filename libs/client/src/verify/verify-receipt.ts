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
import { TrustStore, withChainLock } from './trust-store';
import { checkWitnessedBundle } from './witnessed-bundle';

export interface VerifyReceiptOptions {
  /** The checkpoint verifier key(s) pinned out of band (GET /v1/checkpoint-key, checked once by a person). */
  key: string | readonly string[];
  /** Witness keys (cosignature/v1 verifier keys): the checkpoint must be witnessed by `quorum` of them (§18). */
  witnesses?: readonly string[];
  /** Default: every witness given. */
  quorum?: number;
  /** Where the last trusted checkpoint of each chain is kept: every newer one must be proven consistent with it. */
  trustDir?: string;
}

/** A chain checkpoint whose signature verified: the chain, its size, and the Merkle root it signs (hex). */
export interface VerifiedCheckpoint {
  chainId: string;
  size: number;
  hash: string;
}

/** What a verified receipt was proven against. */
export interface ReceiptCheck {
  checkpoint: VerifiedCheckpoint;
  hashVersion: 1 | 2;
  /** The witness keys whose cosignatures counted (with `witnesses`). */
  witnessedBy: string[];
  /** With trustDir: the size of the checkpoint trusted before this one (null on first use). */
  trustedSize: number | null;
}

/**
 * docs/contract.md §20: the event's hash recomputed from what the service serves (version 1 or 2,
 * libs/hashing), its RFC 9162 inclusion in the tree of a checkpoint signed by the pinned key
 * (the proof's own roots are never read), the witnessed bundle's quorum when witness keys are
 * given, and with trustDir the consistency of that checkpoint with the last one trusted. Each
 * failure rejects with AuditTrailVerificationError naming the check; a call the service refuses
 * or that gets no answer rejects with AuditTrailError.
 */
export async function verifyReceipt(
  client: { events: EventsResource; chains: ChainsResource },
  receipt: Receipt,
  options: VerifyReceiptOptions,
): Promise<ReceiptCheck> {
  const keys = verifierKeys(options.key, parseVerifierKey, 'key');
  const event = await client.events.get(receipt.id);
  const hashVersion = checkEventHash(receipt, event);
  const { checkpoint, note, witnessedBy } = await signedCheckpoint(client.chains, receipt, keys, options);
  const proof = await client.events.proof(receipt.id, checkpoint.size);
  const root = rootFromInclusionProof(
    receipt.position - 1,
    checkpoint.size,
    eventLeafHash(receipt.hash),
    proof.proof.map((h) => Buffer.from(h, 'hex')),
  );
  if (root === null || root.toString('hex') !== checkpoint.hash)
    fail(
      'inclusion',
      `the proof does not lead from the event's hash at position ${receipt.position} to the root the checkpoint signed at size ${checkpoint.size}`,
    );
  const trustedSize = options.trustDir
    ? await withChainLock(`${options.trustDir}\n${receipt.chainId}`, () =>
        holdToTrusted(client.chains, new TrustStore(options.trustDir!), keys, checkpoint, note),
      )
    : null;
  return { checkpoint, hashVersion, witnessedBy, trustedSize };
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
function checkEventHash(receipt: Receipt, event: AuditEvent): 1 | 2 {
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

/** The chain's checkpoint, signed by a pinned key; with witnesses, the latest one a quorum witnessed. */
async function signedCheckpoint(
  chains: ChainsResource,
  receipt: Receipt,
  keys: NoteVerifier[],
  options: VerifyReceiptOptions,
): Promise<{ checkpoint: ChainCheckpoint; note: string; witnessedBy: string[] }> {
  let note: string;
  let witnessedBy: string[] = [];
  if (options.witnesses && options.witnesses.length > 0) {
    const witnesses = verifierKeys(options.witnesses, parseCosignatureVerifierKey, 'witnesses');
    const quorum = options.quorum ?? witnesses.length;
    if (!Number.isSafeInteger(quorum) || quorum < 1 || quorum > witnesses.length)
      throw new TypeError(`quorum must be an integer from 1 to the number of witnesses (${witnesses.length})`);
    const bundle = await chains.witnessedCheckpoint(receipt.chainId).catch((error: unknown) => {
      if (error instanceof AuditTrailError && error.status === 404)
        fail('witnesses', `no checkpoint of chain ${receipt.chainId} is witnessed yet (404)`);
      throw error;
    });
    witnessedBy = checkWitnessedBundle(bundle, keys, witnesses, quorum).cosigners;
    note = bundle.checkpoint;
  } else note = await chains.checkpoint(receipt.chainId);
  const opened = verifyChainCheckpoint(note, keys);
  if (!opened.ok) fail('signature', `the checkpoint of chain ${receipt.chainId}: ${opened.message}`);
  const checkpoint = opened.checkpoint;
  if (checkpoint.chainId !== receipt.chainId)
    fail('signature', `the checkpoint served for chain ${receipt.chainId} is of chain ${checkpoint.chainId}`);
  if (checkpoint.size < receipt.position)
    fail(
      witnessedBy.length > 0 ? 'witnesses' : 'inclusion',
      `the ${witnessedBy.length > 0 ? 'witnessed ' : ''}checkpoint has size ${checkpoint.size}, before the event's position ${receipt.position}`,
    );
  return { checkpoint, note, witnessedBy };
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
