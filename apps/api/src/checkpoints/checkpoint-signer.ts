import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '@app/common';
import { ChainCheckpoint, signChainCheckpoint } from '@app/hashing';
import { loadSigningKey, SigningKey } from './signing-key';

/** Holds the checkpoint signing key (loaded once, at start; a bad SIGNING_KEY stops the start). */
@Injectable()
export class CheckpointSigner {
  private readonly logger = new Logger('Checkpoints');
  private readonly key: SigningKey;

  constructor(config: AppConfig) {
    this.key = loadSigningKey(config.signingKey, config.dataDir, (message) => this.logger.warn(message));
    this.logger.log(`Checkpoints are signed with ${this.key.verifierKey} (from ${this.key.source === 'SIGNING_KEY' ? 'SIGNING_KEY' : 'the key file'})`);
  }

  get verifierKey(): string {
    return this.key.verifierKey;
  }

  get verifier(): SigningKey['verifier'] {
    return this.key.verifier;
  }

  /** Hex key id, as stored beside each note. */
  get keyId(): string {
    return this.key.verifier.keyId.toString('hex');
  }

  /** Ed25519 is deterministic: the same checkpoint always gives the same note. */
  sign(checkpoint: ChainCheckpoint): string {
    return signChainCheckpoint(checkpoint, this.key.privateKey);
  }
}
