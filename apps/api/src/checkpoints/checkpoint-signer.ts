import { Injectable, Logger } from '@nestjs/common';
import { AppConfig, Metrics } from '@app/common';
import { ChainCheckpoint, CHECKPOINT_KEY_NAME, NoteVerifier, signChainCheckpoint, signNote } from '@app/hashing';
import { loadSigningKey, parseRetiredVerifierKeys, SigningKey } from './signing-key';

/**
 * Holds the checkpoint signing key and the keys stored checkpoints may be signed by: it and the
 * retired ones (loaded once, at start; a bad SIGNING_KEY or RETIRED_VERIFIER_KEYS stops the start).
 */
@Injectable()
export class CheckpointSigner {
  private readonly logger = new Logger('Checkpoints');
  private readonly key: SigningKey;
  /** The current key first. */
  readonly verifiers: readonly NoteVerifier[];

  constructor(
    config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    this.key = loadSigningKey(
      config.signingKey,
      config.dataDir,
      (message) => this.logger.warn(message),
      config.signingKeyFile,
    );
    const retired = parseRetiredVerifierKeys(config.retiredVerifierKeys);
    this.verifiers = [this.key.verifier, ...retired];
    this.logger.log(
      `Checkpoints are signed with ${this.key.verifierKey} (from ${this.key.source === 'SIGNING_KEY' ? 'SIGNING_KEY' : 'the key file'})`,
    );
    if (retired.length > 0)
      this.logger.log(
        `Stored checkpoints signed by ${retired.length} retired key(s) of RETIRED_VERIFIER_KEYS are accepted`,
      );
  }

  get verifierKey(): string {
    return this.key.verifierKey;
  }

  /** Hex key id, as stored beside each note. */
  get keyId(): string {
    return this.key.verifier.keyId.toString('hex');
  }

  /** Ed25519 is deterministic: the same checkpoint always gives the same note. */
  sign(checkpoint: ChainCheckpoint): string {
    const note = signChainCheckpoint(checkpoint, this.key.privateKey);
    this.metrics.checkpointSigned();
    return note;
  }

  /** Another note signed with the same key and name: the checkpoint log's checkpoints (docs/contract.md §18). */
  signNote(text: string): string {
    return signNote(text, { name: CHECKPOINT_KEY_NAME, privateKey: this.key.privateKey });
  }
}
