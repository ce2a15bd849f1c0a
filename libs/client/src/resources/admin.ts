import { AnswerOf, Http, QueryOf } from '../http';
import { everyItem } from '../pages';
import type {
  ActionSchema,
  ActionSchemaRequest,
  ActionSchemaWithVersions,
  Account,
  Destination,
  DestinationChange,
  DestinationReplay,
  DestinationRequest,
  Erasure,
  ErasureRequest,
  ErasureResult,
  Key,
  KeyRequest,
  KeyRotation,
  LegalHold,
  Me,
  NewAccount,
  NewDestination,
  NewKey,
  Retention,
  SchemaPreview,
  SweepResult,
} from '../types';

/*
 * The admin routes (docs/contract.md §12, §14, §16, §17, §19): accounts and keys, stream destinations,
 * erasures, retention and legal hold, action schemas. Scopes are the service's business: a key without them gets
 * AuditTrailError 403.
 */

type DataOf<
  P extends
    | '/v1/chain/{chainId}/retention'
    | '/v1/chain/{chainId}/legal-hold'
    | '/v1/accounts/{accountId}/retention'
    | '/v1/accounts/{accountId}/legal-hold',
> = AnswerOf<P, 'put'> extends { data: infer D } ? D : never;

const data = async <T>(answer: Promise<{ body: { data: T } }>): Promise<T> => (await answer).body.data;

export class AccountsResource {
  constructor(private readonly http: Http) {}

  /** The calling key's account and scopes. */
  me(): Promise<Me> {
    return data(this.http.call('get', '/v1/me'));
  }

  list(): AsyncGenerator<Account> {
    return everyItem(async (cursor) => (await this.http.call('get', '/v1/accounts', { query: { cursor } })).body);
  }

  create(account: NewAccount): Promise<Account> {
    return data(this.http.call('post', '/v1/accounts', { body: account }));
  }

  get(accountId: string): Promise<Account> {
    return data(this.http.call('get', '/v1/accounts/{accountId}', { path: { accountId } }));
  }
}

export class KeysResource {
  constructor(private readonly http: Http) {}

  list(accountId: string): AsyncGenerator<Key> {
    return everyItem(
      async (cursor) =>
        (await this.http.call('get', '/v1/accounts/{accountId}/keys', { path: { accountId }, query: { cursor } })).body,
    );
  }

  /** The new key's secret is in this answer only. */
  create(accountId: string, key: KeyRequest): Promise<NewKey> {
    return data(this.http.call('post', '/v1/accounts/{accountId}/keys', { path: { accountId }, body: key }));
  }

  revoke(accountId: string, keyId: string): Promise<Key> {
    return data(this.http.call('delete', '/v1/accounts/{accountId}/keys/{keyId}', { path: { accountId, keyId } }));
  }

  rotate(accountId: string, keyId: string, rotation: KeyRotation = {}): Promise<NewKey> {
    const path = { accountId, keyId };
    return data(this.http.call('post', '/v1/accounts/{accountId}/keys/{keyId}/rotate', { path, body: rotation }));
  }
}

export class DestinationsResource {
  constructor(private readonly http: Http) {}

  list(accountId: string): AsyncGenerator<Destination> {
    return everyItem(
      async (cursor) =>
        (
          await this.http.call('get', '/v1/accounts/{accountId}/destinations', {
            path: { accountId },
            query: { cursor },
          })
        ).body,
    );
  }

  create(accountId: string, destination: DestinationRequest): Promise<NewDestination> {
    const path = { accountId };
    return data(this.http.call('post', '/v1/accounts/{accountId}/destinations', { path, body: destination }));
  }

  get(accountId: string, destinationId: string): Promise<Destination> {
    const path = { accountId, destinationId };
    return data(this.http.call('get', '/v1/accounts/{accountId}/destinations/{destinationId}', { path }));
  }

  change(accountId: string, destinationId: string, change: DestinationChange): Promise<Destination> {
    const path = { accountId, destinationId };
    return data(
      this.http.call('patch', '/v1/accounts/{accountId}/destinations/{destinationId}', { path, body: change }),
    );
  }

  delete(accountId: string, destinationId: string): Promise<Destination> {
    const path = { accountId, destinationId };
    return data(this.http.call('delete', '/v1/accounts/{accountId}/destinations/{destinationId}', { path }));
  }

  pause(accountId: string, destinationId: string): Promise<Destination> {
    const path = { accountId, destinationId };
    return data(this.http.call('post', '/v1/accounts/{accountId}/destinations/{destinationId}/pause', { path }));
  }

  resume(accountId: string, destinationId: string): Promise<Destination> {
    const path = { accountId, destinationId };
    return data(this.http.call('post', '/v1/accounts/{accountId}/destinations/{destinationId}/resume', { path }));
  }

  replay(accountId: string, destinationId: string, replay: DestinationReplay): Promise<Destination> {
    const path = { accountId, destinationId };
    return data(
      this.http.call('post', '/v1/accounts/{accountId}/destinations/{destinationId}/replay', { path, body: replay }),
    );
  }

  rotateSecret(accountId: string, destinationId: string): Promise<NewDestination> {
    const path = { accountId, destinationId };
    return data(
      this.http.call('post', '/v1/accounts/{accountId}/destinations/{destinationId}/rotate-secret', { path }),
    );
  }
}

export class ErasuresResource {
  constructor(private readonly http: Http) {}

  erase(request: ErasureRequest): Promise<ErasureResult> {
    return data(this.http.call('post', '/v1/erasures', { body: request }));
  }

  list(filters: Omit<QueryOf<'/v1/erasures', 'get'>, 'cursor'> = {}): AsyncGenerator<Erasure> {
    return everyItem(
      async (cursor) => (await this.http.call('get', '/v1/erasures', { query: { ...filters, cursor } })).body,
    );
  }
}

export class RetentionResource {
  constructor(private readonly http: Http) {}

  setChain(chainId: string, retention: Retention): Promise<DataOf<'/v1/chain/{chainId}/retention'>> {
    return data(this.http.call('put', '/v1/chain/{chainId}/retention', { path: { chainId }, body: retention }));
  }

  setChainLegalHold(chainId: string, hold: LegalHold): Promise<DataOf<'/v1/chain/{chainId}/legal-hold'>> {
    return data(this.http.call('put', '/v1/chain/{chainId}/legal-hold', { path: { chainId }, body: hold }));
  }

  setAccount(accountId: string, retention: Retention): Promise<DataOf<'/v1/accounts/{accountId}/retention'>> {
    const path = { accountId };
    return data(this.http.call('put', '/v1/accounts/{accountId}/retention', { path, body: retention }));
  }

  setAccountLegalHold(accountId: string, hold: LegalHold): Promise<DataOf<'/v1/accounts/{accountId}/legal-hold'>> {
    const path = { accountId };
    return data(this.http.call('put', '/v1/accounts/{accountId}/legal-hold', { path, body: hold }));
  }

  sweep(): Promise<SweepResult> {
    return data(this.http.call('post', '/v1/retention/sweep'));
  }
}

/** An account's action schemas (docs/contract.md §19): versions per action or `prefix.*`, a preview. */
export class SchemasResource {
  constructor(private readonly http: Http) {}

  /** Each action's latest version (deletions included), oldest action first. */
  async list(accountId: string): Promise<ActionSchema[]> {
    return data(this.http.call('get', '/v1/accounts/{accountId}/schemas', { path: { accountId } }));
  }

  /** The action's latest version with every version. */
  get(accountId: string, action: string): Promise<ActionSchemaWithVersions> {
    return data(this.http.call('get', '/v1/accounts/{accountId}/schemas/{action}', { path: { accountId, action } }));
  }

  version(accountId: string, action: string, n: number): Promise<ActionSchema> {
    const path = { accountId, action, n: String(n) };
    return data(this.http.call('get', '/v1/accounts/{accountId}/schemas/{action}/versions/{n}', { path }));
  }

  /** Saves the next version. */
  put(accountId: string, action: string, body: ActionSchemaRequest): Promise<ActionSchema> {
    return data(
      this.http.call('put', '/v1/accounts/{accountId}/schemas/{action}', { path: { accountId, action }, body }),
    );
  }

  /** Adds a version whose schema is null: appends of the action are then unchecked. */
  remove(accountId: string, action: string): Promise<ActionSchema> {
    return data(this.http.call('delete', '/v1/accounts/{accountId}/schemas/{action}', { path: { accountId, action } }));
  }

  /** What `schema` would refuse among the latest `limit` events of the action; nothing stored. */
  preview(
    accountId: string,
    action: string,
    schema: ActionSchemaRequest['schema'],
    limit?: number,
  ): Promise<SchemaPreview> {
    return data(
      this.http.call('post', '/v1/accounts/{accountId}/schemas/{action}/preview', {
        path: { accountId, action },
        body: { schema },
        ...(limit === undefined ? {} : { query: { limit } }),
      }),
    );
  }
}
