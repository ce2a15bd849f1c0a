import { fromHex, toHex, equalBytes } from './bytes';
import { HashedEvent, recomputeEventHash } from './event-hash';
import { leafHash, rootFromInclusionProof } from './merkle';
import { NoteError, parseCheckpointText, parseVerifierKey, verifySignedNote } from './signed-note';

/** What the API gives for an event's inclusion proof (docs/contract.md §10). */
export interface InclusionProof {
  chainId: string;
  position: number;
  leafIndex: number;
  size: number;
  eventHash: string;
  rootHash: string;
  proof: string[];
}

export interface BrowserCheckInput {
  event: HashedEvent & { hash: string };
  /** The chain's latest checkpoint, a signed note. */
  checkpoint: string;
  /** GET /v1/checkpoint-key. */
  verifierKey: string;
  /** The proof at the checkpoint's size, fetched once the checkpoint is known. */
  proofAt: (size: number) => Promise<InclusionProof>;
}

export type CheckName = 'hash' | 'signature' | 'proof';

export interface Check {
  name: CheckName;
  ok: boolean;
  message: string;
}

export interface BrowserCheck {
  verified: boolean;
  checks: Check[];
}

/**
 * The console's own check of one event (docs/contract.md §15): the hash recomputed from the fields
 * (RFC 8785 + SHA-256) against the stored one, the checkpoint's Ed25519 signature against the
 * verifier key, and the inclusion proof from the stored hash to the signed root (RFC 9162). Verified only when all
 * three hold; each check says what it found.
 */
export async function checkInBrowser(input: BrowserCheckInput): Promise<BrowserCheck> {
  const { event } = input;
  const computed = await recomputeEventHash(event);
  const hash: Check =
    computed === event.hash
      ? {
          name: 'hash',
          ok: true,
          message: `The hash recomputed from the event’s fields is ${computed}, the stored one.`,
        }
      : {
          name: 'hash',
          ok: false,
          message: `The hash does not match: the stored hash is ${event.hash}, the fields hash to ${computed}.`,
        };

  let signature: Check;
  let proof: Check;
  try {
    const key = await parseVerifierKey(input.verifierKey);
    const checkpoint = parseCheckpointText(await verifySignedNote(input.checkpoint, key));
    const expectedOrigin = `audit-trail/${event.chain.id}`;
    if (checkpoint.origin !== expectedOrigin)
      throw new NoteError(`the checkpoint is of ${checkpoint.origin}, not this chain`);
    signature = {
      name: 'signature',
      ok: true,
      message: `The checkpoint of size ${checkpoint.size} is signed by ${key.name}+${toHex(key.keyId)}.`,
    };
    proof = await checkProof(event, checkpoint.size, checkpoint.root, input.proofAt);
  } catch (error) {
    if (!(error instanceof NoteError)) throw error;
    signature = { name: 'signature', ok: false, message: `The signature does not verify: ${error.message}.` };
    proof = {
      name: 'proof',
      ok: false,
      message: 'The proof was not checked: there is no signed root to check it against.',
    };
  }
  const checks = [hash, proof, signature];
  return { verified: checks.every((c) => c.ok), checks };
}

/**
 * The proof's leaf is the event's stored hash, so each check names one thing: altered fields fail
 * the hash check, a stored hash that is not the signed tree's fails this one.
 */
async function checkProof(
  event: HashedEvent & { hash: string },
  size: number,
  root: Uint8Array,
  proofAt: (size: number) => Promise<InclusionProof>,
): Promise<Check> {
  const fail = (why: string): Check => ({ name: 'proof', ok: false, message: `The inclusion proof fails: ${why}.` });
  if (size < event.chain.position)
    return fail(`the latest checkpoint (size ${size}) does not cover position ${event.chain.position}`);
  const answer = await proofAt(size);
  if (answer.leafIndex !== event.chain.position - 1 || answer.size !== size)
    return fail('it is for another position or tree size');
  const path = answer.proof.map(fromHex);
  const leafData = fromHex(event.hash);
  if (path.some((p) => p === null || p.length !== 32) || leafData === null || leafData.length !== 32)
    return fail('it is malformed');
  const derived = await rootFromInclusionProof(answer.leafIndex, size, await leafHash(leafData), path as Uint8Array[]);
  if (derived === null) return fail('it has the wrong number of hashes for this position and size');
  if (!equalBytes(derived, root))
    return fail(`it leads to the root ${toHex(derived)}, not the signed root ${toHex(root)}`);
  return {
    name: 'proof',
    ok: true,
    message: `The event is leaf ${answer.leafIndex} of the signed tree of size ${size}.`,
  };
}
