import { KeyObject } from 'node:crypto';
import {
  Checkpoint,
  cosign,
  emptyRoot,
  formatCosignatureVerifierKey,
  NoteFormatError,
  parseCheckpoint,
  parseNote,
  verifyConsistency,
  verifyNote,
} from '@app/hashing';
import { AddCheckpointRequest, BadRequestError, parseAddCheckpointRequest } from './add-checkpoint-request';
import { KeyedMutex } from './keyed-mutex';
import { CosignedTree, StateStore } from './state-store';
import { WitnessedLog } from './witness-config';

/*
 * c2sp.org/tlog-witness add-checkpoint: cosigns a log's checkpoint only when the log signed it
 * and it extends, by a verified RFC 6962 consistency proof, the last tree this witness cosigned
 * for that origin; the new tree is on disk before the cosignature leaves.
 */

export type AddCheckpointOutcome =
  | { kind: 'cosigned'; origin: string; size: number; lines: string }
  /** 409 with the size this witness last cosigned (text/x.tlog.size): the client retries from it. */
  | { kind: 'size-conflict'; knownSize: number }
  | { kind: 'refused'; status: 400 | 403 | 404 | 409 | 422; message: string };

export interface WitnessOptions {
  name: string;
  privateKey: KeyObject;
  logs: ReadonlyMap<string, WitnessedLog>;
  state: StateStore;
  /** POSIX seconds, the cosignatures' timestamp. */
  now?: () => number;
  /** Where refusals worth an operator's eye are reported (a log that forks or signs badly). */
  warn?: (message: string) => void;
}

const refused = (status: 400 | 403 | 404 | 409 | 422, message: string): AddCheckpointOutcome => ({
  kind: 'refused',
  status,
  message,
});

export class Witness {
  readonly name: string;
  /** The cosignature/v1 verifier key of this witness: what logs and clients configure. */
  readonly verifierKey: string;
  private readonly turns = new KeyedMutex();
  private readonly now: () => number;
  private readonly warn: (message: string) => void;

  constructor(private readonly options: WitnessOptions) {
    this.name = options.name;
    this.verifierKey = formatCosignatureVerifierKey(options.name, options.privateKey);
    this.now = options.now ?? (() => Math.floor(Date.now() / 1000));
    this.warn = options.warn ?? (() => undefined);
  }

  async addCheckpoint(body: Buffer): Promise<AddCheckpointOutcome> {
    let request: AddCheckpointRequest;
    try {
      request = parseAddCheckpointRequest(body);
    } catch (error) {
      if (error instanceof BadRequestError) return refused(400, error.message);
      throw error;
    }
    const checked = this.checkSignedCheckpoint(request);
    if ('kind' in checked) return checked;
    return this.turns.run(checked.origin, () => this.extend(request, checked));
  }

  /** The checks that need no state: syntax, origin, the log's signature. */
  private checkSignedCheckpoint({ note, oldSize }: AddCheckpointRequest): Checkpoint | AddCheckpointOutcome {
    let origin: string;
    try {
      origin = parseNote(note).text.split('\n', 1)[0]!;
    } catch (error) {
      if (error instanceof NoteFormatError) return refused(400, `the checkpoint note is malformed: ${error.message}`);
      throw error;
    }
    const log = this.options.logs.get(origin);
    if (!log) return refused(404, `unknown log origin '${escape(origin)}'`);
    const verified = verifyNote(note, log.verifiers);
    if (!verified.ok) {
      if (verified.reason === 'malformed') return refused(400, verified.message);
      if (verified.reason === 'bad-signature')
        this.warn(`a bad signature from a known key of '${origin}': ${json(note)}`);
      return refused(403, `no signature of a known key of '${escape(origin)}' verifies`);
    }
    let checkpoint: Checkpoint;
    try {
      checkpoint = parseCheckpoint(verified.text);
    } catch (error) {
      if (error instanceof NoteFormatError) return refused(400, `the note is not a checkpoint: ${error.message}`);
      throw error;
    }
    if (checkpoint.hash.length !== 32) return refused(400, 'the checkpoint root hash is not 32 bytes');
    if (checkpoint.size === 0 && !checkpoint.hash.equals(emptyRoot()))
      return refused(400, 'a checkpoint of size 0 has the empty tree root, SHA-256("")');
    if (oldSize > checkpoint.size) return refused(400, `old ${oldSize} is larger than the checkpoint size`);
    return checkpoint;
  }

  /** Runs in the origin's turn: the check against the record and the record's update are one step. */
  private async extend(request: AddCheckpointRequest, checkpoint: Checkpoint): Promise<AddCheckpointOutcome> {
    const { origin, size, hash } = checkpoint;
    const known: CosignedTree = this.options.state.get(origin) ?? { size: 0, hash: emptyRoot() };
    if (request.oldSize !== known.size) return { kind: 'size-conflict', knownSize: known.size };
    if (size === known.size && !hash.equals(known.hash)) {
      this.warn(`'${origin}' presented another root for size ${size} than the one cosigned: ${json(request.note)}`);
      return refused(409, `a different root hash was cosigned for '${escape(origin)}' at size ${size}`);
    }
    if (!verifyConsistency(known.size, size, known.hash, hash, request.proof)) {
      this.warn(`'${origin}': no valid consistency proof from ${known.size} to ${size}: ${json(request.note)}`);
      return refused(422, `the consistency proof from ${known.size} to ${size} does not verify`);
    }
    if (size > known.size) await this.options.state.put(origin, { size, hash });
    const text = parseNote(request.note).text;
    return { kind: 'cosigned', origin, size, lines: cosign(text, this.options.privateKey, this.name, this.now()) };
  }
}

/** Text from the request, quoted for a response or a log line: no control characters. */
function escape(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

function json(text: string): string {
  return JSON.stringify(text);
}
