import { concat, equalBytes, fromBase64, fromHex, sha256, toHex, utf8 } from './bytes';
import { leafHash, rootFromInclusionProof } from './merkle';
import { NoteError, parseCheckpointText, VerifierKey, verifySignedNote } from './signed-note';
import type { InclusionProof } from './browser-check';

/*
 * docs/contract.md §18 in the browser: a witnessed bundle (GET /v1/chain/:chainId/checkpoint/witnessed)
 * checks out when the log checkpoint is signed by the service's key, carries valid cosignatures
 * (c2sp.org/tlog-cosignature, cosignature/v1) of listed witnesses, and includes the chain
 * checkpoint (leaf = SHA-256(0x00 || UTF-8 note)), which is signed by the service's key, is of the
 * event's chain, covers its position, and whose root the event's inclusion proof leads to.
 *   cosignature vkey = <name>+<hex key id>+base64(0x04 || public key), key id = SHA-256(name || 0x0A || 0x04 || key)[:4]
 *   line             = "— <name> base64(key id[4] || timestamp[8, big-endian] || Ed25519 signature[64])"
 *   signed message   = "cosignature/v1\ntime <timestamp>\n" || the log checkpoint's text
 */
const COSIGNATURE = 0x04;
const EM_DASH = '\u2014 ';

export interface WitnessedBundle {
  checkpoint: string;
  logCheckpoint: string;
  leafIndex: number;
  proof: string[];
}

export interface WitnessCheck {
  /** Valid cosignatures of the listed witnesses. */
  cosigned: number;
  listed: number;
  ok: boolean;
  message: string;
}

export async function parseCosignatureKey(text: string): Promise<VerifierKey> {
  const match = /^([^+\s]+)\+([0-9a-f]{8})\+(\S+)$/.exec(text.trim());
  const typed = match ? fromBase64(match[3]!) : null;
  if (!match || !typed || typed.length !== 33 || typed[0] !== COSIGNATURE)
    throw new NoteError('a witness key is not a cosignature/v1 key');
  const [, name = '', idHex = ''] = match;
  const publicKey = typed.slice(1);
  const keyId = (await sha256(utf8(name), new Uint8Array([0x0a, COSIGNATURE]), publicKey)).slice(0, 4);
  if (toHex(keyId) !== idHex) throw new NoteError('a witness key’s id does not match its key');
  return { name, keyId, publicKey };
}

/** How many of `witnesses` have a valid cosignature line in the note (one each at most). */
export async function countCosignatures(note: string, witnesses: readonly VerifierKey[]): Promise<number> {
  const split = note.lastIndexOf('\n\n');
  if (split < 0) return 0;
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split('\n');
  let count = 0;
  for (const witness of witnesses) {
    for (const line of lines) {
      if (await isCosignatureBy(line, text, witness)) {
        count++;
        break;
      }
    }
  }
  return count;
}

async function isCosignatureBy(line: string, text: string, witness: VerifierKey): Promise<boolean> {
  if (!line.startsWith(`${EM_DASH}${witness.name} `)) return false;
  const blob = fromBase64(line.slice(EM_DASH.length + witness.name.length + 1));
  if (!blob || blob.length !== 76 || !equalBytes(blob.slice(0, 4), witness.keyId)) return false;
  const time = new DataView(blob.buffer, blob.byteOffset + 4, 8).getBigUint64(0);
  const message = utf8(`cosignature/v1\ntime ${time}\n${text}`);
  const key = await crypto.subtle.importKey('raw', concat(witness.publicKey), { name: 'Ed25519' }, false, ['verify']);
  return crypto.subtle.verify({ name: 'Ed25519' }, key, concat(blob.slice(12)), concat(message));
}

/** The bundle held against the service's key, the listed witnesses and the event (its chain, position and hash). */
export async function checkWitnessed(input: {
  bundle: WitnessedBundle;
  serviceKey: VerifierKey;
  witnesses: readonly VerifierKey[];
  quorum: number;
  event: { hash: string; chain: { id: string; position: number } };
  proofAt: (size: number) => Promise<InclusionProof>;
}): Promise<WitnessCheck> {
  const { bundle, event } = input;
  const listed = input.witnesses.length;
  const fail = (cosigned: number, why: string): WitnessCheck => ({ cosigned, listed, ok: false, message: why });
  try {
    const log = parseCheckpointText(await verifySignedNote(bundle.logCheckpoint, input.serviceKey));
    const cosigned = await countCosignatures(bundle.logCheckpoint, input.witnesses);
    if (cosigned < input.quorum) return fail(cosigned, `only ${cosigned} of ${listed} witnesses cosigned it`);
    const path = bundle.proof.map(fromHex);
    if (path.some((p) => p === null || p.length !== 32)) return fail(cosigned, 'its log proof is malformed');
    const leaf = await leafHash(utf8(bundle.checkpoint));
    const logRoot = await rootFromInclusionProof(bundle.leafIndex, log.size, leaf, path as Uint8Array[]);
    if (!logRoot || !equalBytes(logRoot, log.root))
      return fail(cosigned, 'the chain checkpoint is not in the witnessed log checkpoint');
    const chain = parseCheckpointText(await verifySignedNote(bundle.checkpoint, input.serviceKey));
    if (chain.origin !== `audit-trail/${event.chain.id}`) return fail(cosigned, 'it is of another chain');
    if (chain.size < event.chain.position)
      return fail(
        cosigned,
        `the witnessed checkpoint (size ${chain.size}) does not cover position ${event.chain.position} yet`,
      );
    const answer = await input.proofAt(chain.size);
    const eventPath = answer.proof.map(fromHex);
    const eventLeaf = fromHex(event.hash);
    if (eventLeaf === null || eventPath.some((p) => p === null || p.length !== 32))
      return fail(cosigned, 'the event’s proof is malformed');
    const root = await rootFromInclusionProof(
      event.chain.position - 1,
      chain.size,
      await leafHash(eventLeaf),
      eventPath as Uint8Array[],
    );
    if (!root || !equalBytes(root, chain.root))
      return fail(cosigned, 'the event is not in the witnessed chain checkpoint');
    return {
      cosigned,
      listed,
      ok: true,
      message: `The chain checkpoint of size ${chain.size} is leaf ${bundle.leafIndex} of the checkpoint log of size ${log.size}, cosigned by ${cosigned} of ${listed} witnesses.`,
    };
  } catch (error) {
    if (error instanceof NoteError) return fail(0, error.message);
    throw error;
  }
}
