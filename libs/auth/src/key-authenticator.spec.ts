import { AppConfig } from '@app/common';
import { generateApiKey } from './api-key';
import { ApiKeyStore } from './api-key.store';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { AuthenticatedKey } from './authenticated-key';
import { KeyAuthenticator } from './key-authenticator';

/** The real authenticator and failure limiter; the key store answers when the test says so. */
describe('KeyAuthenticator', () => {
  const key: AuthenticatedKey = { keyId: 'key_1', accountId: 'acc_1', scopes: ['ingest'] };
  const config = new AppConfig(); // AUTH_FAILURES_PER_MINUTE 60

  function authenticatorWith(answer: Promise<AuthenticatedKey | null>) {
    const lookups: string[] = [];
    const store = {
      cached: () => undefined,
      authenticate: (presented: string) => {
        lookups.push(presented);
        return answer;
      },
    } as unknown as ApiKeyStore;
    return { sut: new KeyAuthenticator(store, new AuthFailureLimiter(config)), lookups };
  }

  it('lets more concurrent requests with one valid key through than the failure limit (its cache entry expired under load)', async () => {
    let answer!: (key: AuthenticatedKey) => void;
    const { sut, lookups } = authenticatorWith(new Promise((resolve) => (answer = resolve)));
    const presented = generateApiKey();
    const pending = Array.from({ length: config.authFailuresPerMinute + 40 }, () =>
      sut.authenticate(`Bearer ${presented}`, () => '10.0.0.1'),
    );
    answer(key);
    const outcomes = await Promise.all(pending);
    expect(outcomes.filter((o) => o.outcome !== 'authenticated')).toEqual([]);
    expect(lookups).toHaveLength(1);
  });

  it('still counts each distinct refused key of an address against its limit', async () => {
    const { sut } = authenticatorWith(Promise.resolve(null));
    const outcomes = await Promise.all(
      Array.from({ length: config.authFailuresPerMinute + 5 }, () =>
        sut.authenticate(`Bearer ${generateApiKey()}`, () => '10.0.0.2'),
      ),
    );
    expect(outcomes.filter((o) => o.outcome === 'refused')).toHaveLength(config.authFailuresPerMinute);
    expect(outcomes.filter((o) => o.outcome === 'throttled')).toHaveLength(5);
  });
});
