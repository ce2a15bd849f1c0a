import { Injectable } from '@nestjs/common';
import { AuthenticatedKey } from '@app/auth';
import { AppError, instantMillis } from '@app/common';
import { DestinationRow, DestinationsRepository, EventTailRepository, LimitedAction } from '@app/database';
import { SecretBox } from '../secret-box';
import { startPosition } from '../stream-start';
import { newWebhookSecret, credentialsToChange, rotated, sealCredentials } from '../destination-credentials';
import { destinationBody, newDestinationBody } from './destination.mapper';
import { DestinationTransactions, DestinationTx } from './destination-transactions';
import { DestinationView, NewDestinationView } from './dto/destination.view';
import { ReplayDestinationDto } from './dto/replay-destination.dto';

/** A destination accepts one `replay` and one `resume` in this many seconds (docs/contract.md §16 "Failures"). */
export const ACTION_INTERVAL_SECONDS = 60;

/**
 * What a person does to a running destination (docs/contract.md §16): pause, resume (also a disabled
 * one, once its receiver is fixed), replay from a time, and a webhook's new signing secret. Each
 * moves the destination's version on (a delivery begun before stops) and is appended to `_audit` in
 * its transaction; doing it again when nothing would change changes and records nothing. None of
 * them touches the backoff: the next attempt still waits what is left of it (the delivery worker
 * reads it from the row). `replay` and `resume` are taken at most once a minute per destination
 * (429 RATE_LIMITED beyond), so repeating them multiplies no deliveries.
 */
@Injectable()
export class DestinationControlsService {
  constructor(
    private readonly access: DestinationTransactions,
    private readonly destinations: DestinationsRepository,
    private readonly events: EventTailRepository,
    private readonly box: SecretBox,
  ) {}

  async pause(caller: AuthenticatedKey, accountId: string, destinationId: string): Promise<{ data: DestinationView }> {
    const row = await this.access.onDestination(caller, accountId, destinationId, async ({ tx, record }, found) => {
      if (found.state === 'paused') return found;
      const paused = await this.destinations.change(found.id, { state: 'paused' }, tx);
      await record('destination.paused', found.id, { from: found.state });
      return paused;
    });
    return destinationBody(row);
  }

  /**
   * Delivers a paused or disabled destination again: `retrying` while its failures since the last
   * acknowledged batch (the backoff's count) are not 0, and STREAM_PAUSE_AFTER_HOURS counts from its
   * next failure. An active or retrying one is left as it is.
   */
  async resume(caller: AuthenticatedKey, accountId: string, destinationId: string): Promise<{ data: DestinationView }> {
    const row = await this.access.onDestination(caller, accountId, destinationId, async (c, found) => {
      await this.limit(c, found, 'resume');
      if (found.state === 'active' || found.state === 'retrying') return found;
      const state = found.consecutiveFailures > 0 ? 'retrying' : 'active';
      const resumed = await this.destinations.change(found.id, { state, restartFailingSince: true }, c.tx);
      await c.record('destination.resumed', found.id, { from: found.state });
      return resumed;
    });
    return destinationBody(row);
  }

  /** Delivers again every retained event from `from` on; the state stays as it is. */
  async replay(
    caller: AuthenticatedKey,
    accountId: string,
    destinationId: string,
    dto: ReplayDestinationDto,
  ): Promise<{ data: DestinationView }> {
    const from = new Date(instantMillis(dto.from)!);
    if (from.getTime() > Date.now())
      throw AppError.validation([{ field: 'from', message: 'from must not be in the future' }]);
    const row = await this.access.onDestination(caller, accountId, destinationId, async (c, found) => {
      const { tx, record } = c;
      await this.limit(c, found, 'replay');
      const position = startPosition(from, await this.events.currentSnapshot(tx));
      const replayed = await this.destinations.change(found.id, { position }, tx);
      await record('destination.replayed', found.id, { from: from.toISOString() });
      return replayed;
    });
    return destinationBody(row);
  }

  /**
   * A webhook's new signing secret, returned this once; the old one is still signed with for 24
   * hours. Another kind has no signing secret: 409 CONFLICT (the request is well formed, the
   * destination is not one it applies to).
   */
  async rotateSecret(
    caller: AuthenticatedKey,
    accountId: string,
    destinationId: string,
  ): Promise<{ data: NewDestinationView }> {
    const secret = newWebhookSecret();
    const row = await this.access.onDestination(caller, accountId, destinationId, async ({ tx, record }, found) => {
      if (found.kind !== 'webhook')
        throw new AppError('CONFLICT', `A ${found.kind} destination has no signing secret to rotate.`, {
          kind: found.kind,
        });
      const credentials = credentialsToChange(this.box, found.id, found.secrets);
      const webhookSecrets = rotated(credentials.webhookSecrets ?? [], secret, new Date());
      const secrets = sealCredentials(this.box, found.id, { ...credentials, webhookSecrets });
      const changed = await this.destinations.change(found.id, { secrets }, tx);
      await record('destination.changed', found.id, { rotated: 'secret' });
      return changed;
    });
    return newDestinationBody(row, secret);
  }

  /** Takes the destination's once-a-minute allowance of `action`, or refuses with 429 and Retry-After. */
  private async limit({ tx }: DestinationTx, found: DestinationRow, action: LimitedAction): Promise<void> {
    const wait = await this.destinations.takeAllowance(found.id, action, ACTION_INTERVAL_SECONDS, tx);
    if (wait > 0)
      throw new AppError(
        'RATE_LIMITED',
        `A destination accepts one ${action} a minute; retry after ${wait} s.`,
        { retryAfterSeconds: wait },
        { 'Retry-After': String(wait) },
      );
  }
}
