import * as http from 'node:http';
import * as https from 'node:https';
import { isIP } from 'node:net';
import { bareHost, policyLookup, resolveAllowed } from './resolve';

/** How much of a response body is read (for lastError's message, a witness's answer); the rest is dropped unread. */
export const MAX_RESPONSE_BYTES = 64 * 1024;

/** A receiver's answer: the status, its headers, the start of its body. */
export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** At most MAX_RESPONSE_BYTES of the body. */
  body: string;
  /** The body was longer than MAX_RESPONSE_BYTES: the rest was not read (and the connection closed). */
  truncated: boolean;
}

/** The agents of one sink: keep-alive connections, each resolved and checked when it is opened. */
export interface SinkAgents {
  http: http.Agent;
  https: https.Agent;
}

/** Keep-alive agents whose every new connection goes through the address policy. */
export function sinkAgents(allowPrivateNetworks: boolean, ca?: string): SinkAgents {
  const lookup = policyLookup(allowPrivateNetworks);
  return {
    http: new http.Agent({ keepAlive: true, maxSockets: 4, lookup }),
    https: new https.Agent({ keepAlive: true, maxSockets: 4, lookup, ...(ca ? { ca } : {}) }),
  };
}

/**
 * POSTs `body` to `url`: redirects are not followed (the answer is returned as is), the body read is
 * bounded, and `signal` (the caller's timeout and abort) destroys the request. Rejects on a network
 * error or a refused address. An IP literal host is checked here, since Node never calls `lookup` for one.
 */
export async function httpPost(
  agents: SinkAgents,
  allowPrivateNetworks: boolean,
  url: URL,
  headers: Record<string, string>,
  body: Buffer,
  signal: AbortSignal,
): Promise<HttpAnswer> {
  const host = bareHost(url.hostname);
  if (isIP(host) !== 0) await resolveAllowed(host, allowPrivateNetworks);
  const secure = url.protocol === 'https:';
  const request = (secure ? https : http).request(url, {
    method: 'POST',
    agent: secure ? agents.https : agents.http,
    headers: { ...headers, 'content-length': String(body.length) },
    signal,
  });
  return new Promise<HttpAnswer>((resolve, reject) => {
    request.on('error', reject);
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = (truncated: boolean) => {
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          truncated,
        });
      };
      response.on('data', (chunk: Buffer) => {
        if (size > MAX_RESPONSE_BYTES) return;
        chunks.push(chunk.subarray(0, MAX_RESPONSE_BYTES - size));
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) {
          response.destroy(); // no more of it is read; the connection is not reused
          finish(true);
        }
      });
      response.on('end', () => finish(false));
      response.on('error', reject);
    });
    request.end(body);
  });
}
