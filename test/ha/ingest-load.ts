import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

/** An event as an append answers it (the fields the drill checks). */
export interface AckedEvent {
  id: string;
  chain: { id: string; position: number };
}

/** One HTTP attempt of a request: when it was sent and answered, and how. */
export interface Attempt {
  sentAt: number;
  answeredAt: number;
  /** The HTTP status, or 0 when no answer came (a network error). */
  status: number;
  retryAfter: string | null;
  code: string | null;
}

/** One logical append (a key, a body) and its attempts, the same Idempotency-Key on each. */
export interface LoggedRequest {
  key: string;
  kind: 'single' | 'batch';
  instance: number;
  attempts: Attempt[];
  /** The events of its 2xx answer; null while it has none. */
  events: AckedEvent[] | null;
}

/** The chains of the load: 64 spread chains and one hot chain. */
export const SPREAD_CHAINS = 64;
export const HOT_CHAIN = 'hot';

/** Seconds of the Retry-After header (1 when absent or not a number, 10 at most). */
function retryDelayMs(retryAfter: string | null): number {
  const seconds = Number(retryAfter);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds, 10) * 1000 : 1000;
}

/**
 * Ingest from `workers` loops over the instances (worker i on instance i mod n): single events on
 * one of 64 chains or the hot chain, and batches of 10 over both, each request with an
 * Idempotency-Key. A client as the contract asks it to be: after a 503 it waits Retry-After and
 * sends the same request with the same key again, until a 2xx (any other answer is logged and
 * retried a second later: the drill fails on it). stop() lets every request in flight finish.
 */
export class IngestLoad {
  readonly requests: LoggedRequest[] = [];
  private running = false;
  private loops: Promise<void>[] = [];
  private sequence = 0;

  constructor(
    private readonly urls: string[],
    private readonly apiKey: string,
    private readonly workers: number,
    private readonly actor = 'drill',
  ) {}

  start(): void {
    this.running = true;
    this.loops = Array.from({ length: this.workers }, (_, worker) => this.loop(worker));
  }

  /** Stops sending new requests and waits for the ones in flight (each until its 2xx, 60 s at most). */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** Every event of a 2xx answer. */
  acknowledged(): AckedEvent[] {
    return this.requests.flatMap((r) => r.events ?? []);
  }

  private async loop(worker: number): Promise<void> {
    const instance = worker % this.urls.length;
    while (this.running) {
      const n = this.sequence++;
      const batch = n % 4 === 3;
      // A third of the events on the hot chain, the others spread over the 64.
      const chain = (k: number) => (k % 3 === 0 ? HOT_CHAIN : `c-${k % SPREAD_CHAINS}`);
      const event = (i: number) => ({
        actor: this.actor,
        action: 'drill.append',
        resource: `r:${n}:${i}`,
        chain: chain(n * 10 + i),
      });
      const request: LoggedRequest = {
        key: randomUUID(),
        kind: batch ? 'batch' : 'single',
        instance,
        attempts: [],
        events: null,
      };
      this.requests.push(request);
      const body = JSON.stringify(batch ? { events: Array.from({ length: 10 }, (_, i) => event(i)) } : event(0));
      await this.send(request, `${this.urls[instance]}/v1/events${batch ? '/batch' : ''}`, body);
    }
  }

  private async send(request: LoggedRequest, url: string, body: string): Promise<void> {
    const giveUp = Date.now() + 120_000;
    while (Date.now() < giveUp) {
      const sentAt = Date.now();
      const answer = await fetch(url, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${this.apiKey}`,
          'Content-Type': 'application/json',
          'Idempotency-Key': request.key,
        },
        body,
        signal: AbortSignal.timeout(30_000),
      }).then(
        async (res) => ({
          status: res.status,
          retryAfter: res.headers.get('retry-after'),
          json: await res.json().catch(() => null),
        }),
        () => ({ status: 0, retryAfter: null, json: null }),
      );
      const json = answer.json as { data?: AckedEvent | AckedEvent[]; error?: { code?: string } } | null;
      request.attempts.push({
        sentAt,
        answeredAt: Date.now(),
        status: answer.status,
        retryAfter: answer.retryAfter,
        code: json?.error?.code ?? null,
      });
      if (answer.status >= 200 && answer.status < 300 && json?.data) {
        const data = json.data;
        request.events = (Array.isArray(data) ? data : [data]).map((e) => ({
          id: e.id,
          chain: { id: e.chain.id, position: e.chain.position },
        }));
        return;
      }
      await sleep(answer.status === 503 ? retryDelayMs(answer.retryAfter) : 1000);
    }
  }
}

/** What a failover did to the load: measured from the attempts around `from` (the leader's death, or the switchover's start). */
export interface FailoverImpact {
  /** Per instance: its first answer other than 2xx at or after `from` (the outage as its clients saw it), or null. */
  firstFailure: (number | null)[];
  /** Per instance: its first 2xx to a request sent after its first failure (or after `from` when none): ingest back. */
  resumedAt: (number | null)[];
  /** From `from` to the first instance's resumption (ms); null while none. */
  firstSuccessMs: number | null;
  /** Requests with at least one answer other than 2xx in the window. */
  cut: LoggedRequest[];
  /** Attempts after the first of each request, in the window. */
  retries: number;
  /** Cut requests whose first retry sent after their instance resumed was not answered 2xx. */
  notServedOnFirstRetry: LoggedRequest[];
  /** Every answer status in the window, counted. */
  statuses: Record<string, number>;
  /** 503s without Retry-After. */
  withoutRetryAfter: number;
}

const ok = (a: Attempt) => a.status >= 200 && a.status < 300;
const earliest = (times: number[]): number | null => (times.length === 0 ? null : Math.min(...times));

/** The effect on `requests` of a failover that began at `from`, until `until`. */
export function failoverImpact(
  requests: LoggedRequest[],
  instances: number,
  from: number,
  until: number,
): FailoverImpact {
  const inWindow = (a: Attempt) => a.answeredAt >= from && a.sentAt <= until;
  const attemptsOf = (instance: number) => requests.filter((r) => r.instance === instance).flatMap((r) => r.attempts);
  const firstFailure = Array.from({ length: instances }, (_, instance) =>
    earliest(
      attemptsOf(instance)
        .filter((a) => a.answeredAt >= from && !ok(a))
        .map((a) => a.answeredAt),
    ),
  );
  const resumedAt = firstFailure.map((failed, instance) =>
    earliest(
      attemptsOf(instance)
        .filter((a) => ok(a) && a.sentAt >= (failed ?? from))
        .map((a) => a.answeredAt),
    ),
  );
  const touched = requests.filter((r) => r.attempts.some(inWindow));
  const cut = touched.filter((r) => r.attempts.some((a) => inWindow(a) && !ok(a)));
  const statuses: Record<string, number> = {};
  let retries = 0;
  let withoutRetryAfter = 0;
  for (const r of touched)
    r.attempts.forEach((a, i) => {
      if (!inWindow(a)) return;
      statuses[a.status] = (statuses[a.status] ?? 0) + 1;
      if (i > 0) retries++;
      if (a.status === 503 && !a.retryAfter) withoutRetryAfter++;
    });
  const notServedOnFirstRetry = cut.filter((r) => {
    const resumed = resumedAt[r.instance] ?? null;
    const retry = r.attempts.find((a, i) => i > 0 && resumed !== null && a.sentAt >= resumed);
    return retry !== undefined && !ok(retry);
  });
  const first = earliest(resumedAt.filter((t): t is number => t !== null));
  return {
    firstFailure,
    resumedAt,
    firstSuccessMs: first === null ? null : first - from,
    cut,
    retries,
    notServedOnFirstRetry,
    statuses,
    withoutRetryAfter,
  };
}
