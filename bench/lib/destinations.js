'use strict';

/**
 * The destinations API of one account (docs/contract.md §16), called with an `admin` key of that account:
 * list, create, read, pause, resume, delete. An answer other than the expected one throws with its status
 * and error code (never the body of a create: it holds the webhook's signing secret).
 */
function destinationsApi(serviceUrl, accountId, adminKey) {
  const base = `${serviceUrl}/v1/accounts/${accountId}/destinations`;
  const call = async (method, path, expected, body) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const parsed = await response.json().catch(() => null);
    if (response.status !== expected) {
      const error = new Error(
        `${method} …/destinations${path} answered ${response.status} ${(parsed && parsed.error && parsed.error.code) || ''}`.trim(),
      );
      error.status = response.status;
      error.code = parsed && parsed.error ? parsed.error.code : undefined;
      throw error;
    }
    return parsed.data;
  };
  return {
    /** The first page of the account's destinations (a probe: 404 before the API exists). */
    list: () => call('GET', '', 200),
    /** A webhook to `url` of every event of the account, from now on; its secret is dropped here. */
    createWebhook: async (name, url, batchSize) => {
      const { secret: _secret, ...destination } = await call('POST', '', 201, {
        name,
        kind: 'webhook',
        url,
        batchSize,
      });
      return destination;
    },
    get: (id) => call('GET', `/${id}`, 200),
    pause: (id) => call('POST', `/${id}/pause`, 200),
    resume: (id) => call('POST', `/${id}/resume`, 200),
    remove: (id) => call('DELETE', `/${id}`, 200),
  };
}

module.exports = { destinationsApi };
