import { createHash, generateKeyPairSync, KeyObject } from 'node:crypto';
import {
  extendTree,
  formatCheckpoint,
  formatVerifierKey,
  leafHash,
  merkleRoot,
  NodeId,
  parseVerifierKey,
  proveConsistency,
  signNote,
} from '@app/hashing';
import { WitnessedLog } from './witness-config';

/** A log for tests: leaves from a seed, checkpoints signed by its key, real RFC 9162 proofs. */
export class TestLog {
  readonly key: KeyObject;
  readonly vkey: string;
  private readonly leaves: Buffer[] = [];

  constructor(
    readonly origin = 'audit-trail/checkpoint-log',
    private readonly seed = 'main',
    key?: KeyObject,
  ) {
    this.key = key ?? generateKeyPairSync('ed25519').privateKey;
    this.vkey = formatVerifierKey('audit-trail', this.key);
  }

  /** The same origin and key, other leaves: a fork of this log. */
  fork(seed: string): TestLog {
    return new TestLog(this.origin, seed, this.key);
  }

  get witnessed(): WitnessedLog {
    return { origin: this.origin, verifiers: [parseVerifierKey(this.vkey)] };
  }

  root(size: number): Buffer {
    this.grow(size);
    return merkleRoot(this.leaves.slice(0, size));
  }

  checkpoint(size: number, key: KeyObject = this.key): string {
    return signNote(formatCheckpoint({ origin: this.origin, size, hash: this.root(size) }), {
      name: 'audit-trail',
      privateKey: key,
    });
  }

  async proof(from: number, to: number): Promise<Buffer[]> {
    this.grow(to);
    const { nodes } = extendTree(0, [], this.leaves.slice(0, to));
    const byId = new Map(nodes.map((n) => [`${n.level}/${n.index}`, n.hash]));
    return proveConsistency(from, to, (ids: readonly NodeId[]) =>
      Promise.resolve(ids.map((id) => byId.get(`${id.level}/${id.index}`)!)),
    );
  }

  /** The body of POST /add-checkpoint from `old` to a checkpoint of `size`. */
  async request(old: number, size: number, note = this.checkpoint(size)): Promise<string> {
    const proof = old === 0 ? [] : await this.proof(old, size);
    return `old ${old}\n${proof.map((h) => `${h.toString('base64')}\n`).join('')}\n${note}`;
  }

  private grow(size: number): void {
    while (this.leaves.length < size) {
      const data = createHash('sha256').update(`${this.seed}/${this.leaves.length}`).digest();
      this.leaves.push(leafHash(data));
    }
  }
}
