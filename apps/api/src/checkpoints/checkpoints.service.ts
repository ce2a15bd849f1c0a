import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AppError, CHAIN_ID } from '@app/common';
import { CheckpointSigner } from './checkpoint-signer';

interface Head {
  size: number;
  hash: string;
}

interface StoredRow {
  size: string;
  hash: string;
  key_id: string;
  note: string;
}

/**
 * Signs checkpoints. The invariant (tlog-checkpoint: never sign a checkpoint inconsistent with
 * one signed before) is checked against the stored checkpoints inside a transaction that holds
 * the chain row FOR SHARE: appends (which take it FOR UPDATE) wait, other checkpoint requests
 * do not, and all of them see the same head.
 */
@Injectable()
export class CheckpointsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly signer: CheckpointSigner,
  ) {}

  verifierKey(): string {
    return `${this.signer.verifierKey}\n`;
  }

  /** The latest checkpoint of the chain as a signed note, signing a new one if the chain grew. */
  async latest(accountId: string, chainId: string): Promise<string> {
    if (!CHAIN_ID.test(chainId)) throw AppError.notFound(`Chain ${chainId}`);
    return this.dataSource.transaction('READ COMMITTED', async (m) => {
      const head = await this.lockHead(m, accountId, chainId);
      const latest = await this.latestStored(m, chainId);
      if (latest && Number(latest.size) === head.size && latest.hash === head.hash)
        return this.asCurrent(chainId, latest);
      if (latest) await this.assertExtends(m, chainId, head, latest);
      const note = this.signer.sign({ chainId, size: head.size, hash: head.hash });
      const inserted = (await m.query(
        `INSERT INTO checkpoints (chain_id, size, hash, key_id, note) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (chain_id, size) DO NOTHING RETURNING size`,
        [chainId, head.size, head.hash, this.signer.keyId, note],
      )) as unknown[];
      if (inserted.length === 1) return note;
      // A concurrent request stored this size first (it saw the same head: we both hold the lock).
      const stored = await this.latestStored(m, chainId);
      if (!stored || Number(stored.size) !== head.size || stored.hash !== head.hash)
        throw this.refuse(chainId, head, stored);
      return this.asCurrent(chainId, stored);
    });
  }

  private async lockHead(m: EntityManager, accountId: string, chainId: string): Promise<Head> {
    const [row] = (await m.query(
      `SELECT last_position::text AS size, last_hash FROM chains WHERE id = $1 AND account_id = $2 FOR SHARE`,
      [chainId, accountId],
    )) as { size: string; last_hash: string }[];
    if (!row) throw AppError.notFound(`Chain ${chainId}`);
    return { size: Number(row.size), hash: row.last_hash };
  }

  private async latestStored(m: EntityManager, chainId: string): Promise<StoredRow | undefined> {
    const [row] = (await m.query(
      `SELECT size::text AS size, hash, key_id, note FROM checkpoints WHERE chain_id = $1 ORDER BY checkpoints.size DESC LIMIT 1`,
      [chainId],
    )) as StoredRow[];
    return row;
  }

  /** The head may only be signed if it grew from the latest signed checkpoint, through its hash. */
  private async assertExtends(m: EntityManager, chainId: string, head: Head, latest: StoredRow): Promise<void> {
    const signedSize = Number(latest.size);
    if (signedSize >= head.size) throw this.refuse(chainId, head, latest);
    if (signedSize === 0) return;
    const [through] = (await m.query(`SELECT hash FROM events WHERE chain_id = $1 AND position = $2`, [
      chainId,
      signedSize,
    ])) as { hash: string }[];
    if (through?.hash !== latest.hash) throw this.refuse(chainId, head, latest);
  }

  /** A note signed by an earlier key is signed again, identically in content, by the current one. */
  private asCurrent(chainId: string, stored: StoredRow): string {
    if (stored.key_id === this.signer.keyId) return stored.note;
    return this.signer.sign({ chainId, size: Number(stored.size), hash: stored.hash });
  }

  /** A 500: the global filter logs it, which is what an operator must see. */
  private refuse(chainId: string, head: Head, signed: StoredRow | undefined): AppError {
    const message =
      `Refusing to sign chain ${chainId} at size ${head.size}: it is inconsistent with the checkpoint signed at size ${signed?.size ?? '?'}. ` +
      'The chain was altered after that checkpoint; run GET /v1/chain/:chainId/verify.';
    return new AppError('INTERNAL_ERROR', message, { chainId, size: head.size, signedSize: Number(signed?.size ?? 0) });
  }
}
