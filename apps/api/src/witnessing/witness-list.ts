import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/common';
import { NoteFormatError, NoteVerifier, parseCosignatureVerifierKey } from '@app/hashing';

export interface ListedWitness {
  /** The key's name (what its cosignature lines carry). */
  name: string;
  /** The cosignature/v1 verifier key as configured: the witness's identity in the database. */
  key: string;
  url: string;
  verifier: NoteVerifier;
}

/** WITNESSES and WITNESS_QUORUM, each key read once at start: a key whose id does not match stops the start. */
@Injectable()
export class WitnessList {
  readonly witnesses: readonly ListedWitness[];
  readonly quorum: number;

  constructor(config: AppConfig) {
    this.witnesses = config.witnesses.map(({ key, url }, index) => {
      try {
        const verifier = parseCosignatureVerifierKey(key);
        return { name: verifier.name, key, url, verifier };
      } catch (error) {
        if (error instanceof NoteFormatError)
          throw new Error(`Invalid configuration:\n- WITNESSES entry ${index + 1}: ${error.message}`);
        throw error;
      }
    });
    this.quorum = config.witnessQuorum;
  }

  get keys(): string[] {
    return this.witnesses.map((w) => w.key);
  }
}
