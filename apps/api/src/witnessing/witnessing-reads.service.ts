import { Injectable } from '@nestjs/common';
import { AppError, CHAIN_ID } from '@app/common';
import { ChainsRepository, CheckpointLogRepository, LogCheckpointRow } from '@app/database';
import { parseNote, proveInclusion, verifyCosignature, verifyNote } from '@app/hashing';
import { CheckpointSigner } from '../checkpoints/checkpoint-signer';
import { WitnessedCheckpointView, WitnessView } from './dto/witnessing.view';
import { WitnessList } from './witness-list';

/** Log checkpoints looked at, newest first, for one with a quorum of valid cosignatures. */
const CANDIDATES = 20;

/**
 * The reads of docs/contract.md §18. Stored cosignature lines are verified again on every read
 * (a line that does not verify, or of a witness no longer listed, is never served), and so is the
 * log checkpoint's own signature.
 */
@Injectable()
export class WitnessingReadsService {
  constructor(
    private readonly log: CheckpointLogRepository,
    private readonly chains: ChainsRepository,
    private readonly list: WitnessList,
    private readonly signer: CheckpointSigner,
  ) {}

  witnesses(): { data: WitnessView[] } {
    return { data: this.list.witnesses.map(({ name, key, url }) => ({ name, key, url })) };
  }

  /** GET /v1/checkpoint-log: the latest log checkpoint with its valid cosignature lines. */
  async latest(): Promise<string> {
    const latest = await this.log.latestCheckpoint();
    if (!latest) throw AppError.notFound('Checkpoint log checkpoint');
    return (await this.cosigned(latest)).note;
  }

  async witnessed(accountId: string, chainId: string): Promise<{ data: WitnessedCheckpointView }> {
    if (!CHAIN_ID.test(chainId) || !(await this.chains.findOwned(accountId, chainId)))
      throw AppError.notFound(`Chain ${chainId}`);
    const none = AppError.notFound(`Witnessed checkpoint of chain ${chainId}`);
    if (this.list.witnesses.length === 0) throw none;
    for (const candidate of await this.log.cosignedCheckpoints(this.list.keys, this.list.quorum, CANDIDATES)) {
      const { note, witnesses } = await this.cosigned(candidate);
      if (witnesses < this.list.quorum || !verifyNote(candidate.note, this.signer.verifiers).ok) continue;
      const leaf = await this.log.latestLeafOf(chainId, candidate.size);
      if (!leaf) throw none;
      const proof = await proveInclusion(leaf.leafIndex, candidate.size, this.log.reader());
      return {
        data: {
          checkpoint: leaf.note,
          logCheckpoint: note,
          leafIndex: leaf.leafIndex,
          proof: proof.map((hash) => hash.toString('hex')),
          witnesses,
        },
      };
    }
    throw none;
  }

  /** The log checkpoint's note followed by the stored cosignature lines that verify, one per listed witness. */
  private async cosigned(checkpoint: LogCheckpointRow): Promise<{ note: string; witnesses: number }> {
    const { text } = parseNote(checkpoint.note);
    const lines: string[] = [];
    for (const row of await this.log.cosignaturesOf(checkpoint.size)) {
      const witness = this.list.witnesses.find((w) => w.key === row.witness);
      if (witness && verifyCosignature(text, row.line, witness.verifier).ok) lines.push(row.line);
    }
    return { note: `${checkpoint.note}${lines.join('')}`, witnesses: lines.length };
  }
}
