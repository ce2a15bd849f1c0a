import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig, Metrics } from '@app/common';
import { CheckpointLogRepository, LogCheckpointRow } from '@app/database';
import { parseNote, proveConsistency, verifyCosignature } from '@app/hashing';
import { CheckpointLogService } from './checkpoint-log.service';
import { ListedWitness, WitnessList } from './witness-list';
import { addCheckpointBody, backoffMs, postAddCheckpoint } from './witness-client';

/** A witness that failed (or refused) this many times in a row waits at most this long. */
const MAX_BACKOFF_MS = 5 * 60 * 1000;

interface Backoff {
  failures: number;
  notBefore: number;
}

/**
 * Every WITNESS_INTERVAL_SECONDS: signs a log checkpoint if the log grew (CheckpointLogService, one
 * instance at a time) and submits the latest log checkpoint to each witness that has not cosigned
 * it (docs/contract.md §18), from the size that witness last cosigned (stored), following a 409's
 * size once. A witness that fails or refuses waits (backoffMs) before its next attempt; a refusal,
 * ours or its, is counted (audit_witness_refusals_total) and logged at warn. Rounds of one
 * instance never overlap; two instances submitting the same checkpoint is harmless (the second
 * gets a 409 with the size the first reached, and then a second cosignature of the same tree).
 */
@Injectable()
export class WitnessingService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Witnessing');
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private readonly backoff = new Map<string, Backoff>();
  /** Aborts requests in flight at shutdown. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly config: AppConfig,
    private readonly log: CheckpointLogRepository,
    private readonly logService: CheckpointLogService,
    private readonly list: WitnessList,
    private readonly metrics: Metrics,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.round(), this.config.witnessIntervalSeconds * 1000);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.stopping.abort();
    await this.running;
  }

  /** One round (also what tests call to run it now); a round already running is joined. */
  async round(): Promise<void> {
    if (this.running) return this.running;
    if (this.stopping.signal.aborted) return;
    this.running = this.run()
      .catch((error: unknown) =>
        this.logger.warn(`Witnessing round failed: ${error instanceof Error ? error.message : String(error)}`),
      )
      .finally(() => (this.running = null));
    return this.running;
  }

  private async run(): Promise<void> {
    const signed = await this.logService.signIfGrown();
    if (!signed && this.list.witnesses.length === 0) return;
    const latest = signed ?? (await this.log.latestCheckpoint());
    if (!latest) return;
    const now = Date.now();
    const due = this.list.witnesses.filter((w) => (this.backoff.get(w.key)?.notBefore ?? 0) <= now);
    await Promise.all(due.map((witness) => this.submit(witness, latest)));
  }

  /** Brings one witness to `latest`; the outcome moves its backoff. */
  private async submit(witness: ListedWitness, latest: LogCheckpointRow): Promise<void> {
    let outcome: 'done' | 'failed';
    try {
      outcome = await this.exchange(witness, latest);
    } catch (error) {
      this.logger.warn(`Witness ${witness.name}: ${error instanceof Error ? error.message : String(error)}`);
      outcome = 'failed';
    }
    const failures = outcome === 'done' ? 0 : (this.backoff.get(witness.key)?.failures ?? 0) + 1;
    const wait = backoffMs(failures, this.config.witnessIntervalSeconds * 1000, MAX_BACKOFF_MS);
    this.backoff.set(witness.key, { failures, notBefore: Date.now() + wait });
  }

  private async exchange(witness: ListedWitness, latest: LogCheckpointRow): Promise<'done' | 'failed'> {
    let old = await this.log.cosignedSize(witness.key);
    if (old === latest.size) return 'done';
    if (old > latest.size)
      return this.refuse(witness, `it cosigned size ${old}, larger than this log (${latest.size})`);
    if (old > 0 && !(await this.logService.rootAt(old)).equals((await this.log.checkpointOfSize(old))!.root))
      return this.refuse(witness, `the log's tree at size ${old}, which it cosigned, is no longer the one it cosigned`);
    for (let attempt = 0; attempt < 2; attempt++) {
      const proof = await proveConsistency(old, latest.size, this.log.reader());
      const body = addCheckpointBody(old, proof, latest.note);
      const timeout = this.config.witnessTimeoutSeconds * 1000;
      const answer = await postAddCheckpoint(witness.url, body, timeout, this.stopping.signal);
      switch (answer.kind) {
        case 'cosigned':
          return this.store(witness, latest, answer.lines);
        case 'refused':
          return this.refuse(witness, `HTTP ${answer.status} for size ${latest.size} from ${old}: ${answer.message}`);
        case 'failed':
          this.logger.warn(`Witness ${witness.name} unreachable or failing: ${answer.message}`);
          return 'failed';
        case 'size':
          if (answer.size > latest.size)
            return this.refuse(witness, `it has cosigned size ${answer.size}, larger than this log (${latest.size})`);
          if (attempt > 0 || answer.size === old) {
            this.logger.warn(
              `Witness ${witness.name} answered 409 (size ${answer.size}) again after resubmitting from its size`,
            );
            return 'failed';
          }
          this.logger.log(`Witness ${witness.name} is at size ${answer.size}, not ${old}: resubmitting from it`);
          old = answer.size;
      }
    }
    return 'failed';
  }

  /** Stores the first line that is a valid cosignature by this witness of `latest`. */
  private async store(witness: ListedWitness, latest: LogCheckpointRow, lines: string[]): Promise<'done' | 'failed'> {
    const { text } = parseNote(latest.note);
    const line = lines.find((l) => verifyCosignature(text, l, witness.verifier).ok);
    if (!line) {
      this.logger.warn(`Witness ${witness.name} answered 200 without a valid cosignature of size ${latest.size}`);
      return 'failed';
    }
    await this.log.insertCosignature({ witness: witness.key, size: latest.size, line });
    this.metrics.witnessCosigned(witness.name);
    return 'done';
  }

  private refuse(witness: ListedWitness, why: string): 'failed' {
    this.metrics.witnessRefused(witness.name);
    this.logger.warn(`Witness ${witness.name} refused: ${why}`);
    return 'failed';
  }
}
