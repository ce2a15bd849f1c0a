import { Injectable } from '@nestjs/common';
import { ulid } from 'ulid';
import { AuthenticatedKey, Page } from '@app/auth';
import { AppConfig, AppError, DESTINATIONS_CURSOR, instantMillis, PageQueryDto } from '@app/common';
import { DestinationChange, DestinationRow, DestinationsRepository, EventTailRepository } from '@app/database';
import { SecretBox } from '../secret-box';
import { startPosition } from '../stream-start';
import {
  DestinationCredentials,
  newWebhookSecret,
  credentialsToChange,
  sealCredentials,
} from '../destination-credentials';
import { DEFAULT_BATCH_SIZE, DEFAULT_TIMEOUT_SECONDS, DestinationKind } from './destination-kinds';
import { destinationBody, destinationsBody, newDestinationBody } from './destination.mapper';
import { auditedSettings, kindProblems } from './destination-settings';
import { DestinationTransactions } from './destination-transactions';
import { ChangeDestinationDto } from './dto/change-destination.dto';
import { CreateDestinationDto } from './dto/create-destination.dto';
import { DestinationView, NewDestinationView } from './dto/destination.view';

/**
 * Destinations' settings (docs/contract.md §16): list, read, create (at most DESTINATIONS_PER_ACCOUNT, the
 * count taken under the account's lock), change and delete, each change with its `_audit` entry
 * in its transaction (DestinationTransactions: tenancy as for keys). Credentials are sealed with
 * SecretBox and never leave here but as a new webhook's secret, once.
 */
@Injectable()
export class DestinationsService {
  constructor(
    private readonly access: DestinationTransactions,
    private readonly destinations: DestinationsRepository,
    private readonly events: EventTailRepository,
    private readonly box: SecretBox,
    private readonly config: AppConfig,
  ) {}

  async list(
    caller: AuthenticatedKey,
    accountId: string,
    query: PageQueryDto,
  ): Promise<{ data: DestinationView[]; nextCursor?: string }> {
    const account = await this.access.readable(caller, accountId);
    const after = query.cursor === undefined ? undefined : DESTINATIONS_CURSOR.decode(account.id, query.cursor);
    const rows = await this.destinations.listInAccount(account.id, query.limit + 1, after);
    const page: Page<DestinationRow> = DESTINATIONS_CURSOR.page(account.id, rows, query.limit, (d) => ({
      time: d.createdAt.toISOString(),
      id: d.id,
    }));
    return destinationsBody(page);
  }

  async get(caller: AuthenticatedKey, accountId: string, destinationId: string): Promise<{ data: DestinationView }> {
    return destinationBody(await this.access.destination(caller, accountId, destinationId));
  }

  async create(
    caller: AuthenticatedKey,
    accountId: string,
    dto: CreateDestinationDto,
  ): Promise<{ data: NewDestinationView }> {
    this.assertFits(dto.kind, dto, true);
    const secret = dto.kind === 'webhook' ? newWebhookSecret() : null;
    const row = await this.access.inAccount(caller, accountId, async ({ tx, account, record }) => {
      const limit = this.config.destinationsPerAccount;
      if ((await this.destinations.countInAccount(account.id, tx)) >= limit)
        throw new AppError('CONFLICT', `An account has at most ${limit} destinations (DESTINATIONS_PER_ACCOUNT).`, {
          limit,
        });
      const id = `dst_${ulid()}`;
      const settings = settingsOf(dto);
      const credentials: DestinationCredentials = {
        ...(secret === null ? {} : { webhookSecrets: [{ secret, until: null }] }),
        headers: {},
        ...pick(dto),
      };
      const position = startPosition(startOf(settings.start), await this.events.currentSnapshot(tx));
      const secrets = sealCredentials(this.box, id, credentials);
      const made = await this.destinations.insert({ id, accountId: account.id, ...settings, secrets, position }, tx);
      const { options: _options, ...audited } = settings;
      await record('destination.created', id, auditedSettings({ ...audited, ...options(dto), ...pick(dto) }));
      return made;
    });
    return newDestinationBody(row, secret);
  }

  async change(
    caller: AuthenticatedKey,
    accountId: string,
    destinationId: string,
    dto: ChangeDestinationDto,
  ): Promise<{ data: DestinationView }> {
    const row = await this.access.onDestination(caller, accountId, destinationId, async ({ tx, record }, found) => {
      this.assertFits(found.kind as DestinationKind, dto, false);
      const change: DestinationChange = {
        name: dto.name,
        url: dto.url,
        format: dto.format,
        q: dto.q,
        batchSize: dto.batchSize,
        timeoutSeconds: dto.timeoutSeconds,
      };
      if (dto.sourcetype !== undefined || dto.index !== undefined)
        change.options = { ...found.options, ...options(dto) };
      if (dto.headers !== undefined || dto.token !== undefined || dto.apiKey !== undefined) {
        const credentials = credentialsToChange(this.box, found.id, found.secrets);
        change.secrets = sealCredentials(this.box, found.id, { ...credentials, ...pick(dto) });
      }
      const context = auditedSettings({
        ...change,
        options: undefined,
        secrets: undefined,
        ...pick(dto),
        ...options(dto),
      });
      if (Object.keys(context).length === 0) return found;
      const changed = await this.destinations.change(found.id, change, tx);
      await record('destination.changed', found.id, context);
      return changed;
    });
    return destinationBody(row);
  }

  /** Removes the destination; the answer is the destination as it was. */
  async delete(caller: AuthenticatedKey, accountId: string, destinationId: string): Promise<{ data: DestinationView }> {
    const row = await this.access.onDestination(caller, accountId, destinationId, async ({ tx, record }, found) => {
      await this.destinations.delete(found.id, tx);
      await record('destination.deleted', found.id, { name: found.name, kind: found.kind });
      return found;
    });
    return destinationBody(row);
  }

  private assertFits(kind: DestinationKind, settings: ChangeDestinationDto, creating: boolean): void {
    const problems = kindProblems(kind, settings, this.config.streamAllowPrivateNetworks, creating);
    if (problems.length > 0) throw AppError.validation(problems);
  }
}

/** A new destination's settings: the body's, with the defaults of what it leaves out. */
function settingsOf(dto: CreateDestinationDto) {
  return {
    name: dto.name,
    kind: dto.kind,
    url: dto.url,
    format: dto.format ?? 'native',
    q: dto.q ?? null,
    batchSize: dto.batchSize ?? DEFAULT_BATCH_SIZE,
    timeoutSeconds: dto.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
    start: dto.start ?? 'now',
    options: options(dto),
  };
}

/** Where `start` begins: `now`, `beginning`, or the instant it names (validated by the DTO). */
function startOf(start: string): 'now' | 'beginning' | Date {
  return start === 'now' || start === 'beginning' ? start : new Date(instantMillis(start)!);
}

/** A splunk_hec destination's options given (no secret). */
function options(dto: ChangeDestinationDto): Record<string, string> {
  return {
    ...(dto.sourcetype === undefined ? {} : { sourcetype: dto.sourcetype }),
    ...(dto.index === undefined ? {} : { index: dto.index }),
  };
}

/** The credentials a body gives (sealed, never stored or recorded as they are). */
function pick(dto: ChangeDestinationDto): Partial<DestinationCredentials> {
  return {
    ...(dto.token === undefined ? {} : { token: dto.token }),
    ...(dto.apiKey === undefined ? {} : { apiKey: dto.apiKey }),
    ...(dto.headers === undefined ? {} : { headers: dto.headers }),
  };
}
