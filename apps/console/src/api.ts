import { pageAccount, readsAccount } from './account';
import { session } from './session';

/** An answer of the API that was not a success, in words (docs/contract.md §5's envelope when there is one). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type Query = Record<string, string | number | undefined>;

function url(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    if (value !== undefined && value !== '') params.set(name, String(value));
  const text = params.toString();
  return text === '' ? path : `${path}?${text}`;
}

/** Every request of the console: this origin, the key in the Authorization header and nowhere else. */
export async function request(
  method: string,
  path: string,
  query?: Query,
  body?: unknown,
  signal?: AbortSignal,
): Promise<Response> {
  const headers: Record<string, string> = {};
  const key = session.key();
  if (key !== null) headers.Authorization = `Bearer ${key}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  // An operator's page of another account reads that account (account.ts), on the read routes only.
  const account = pageAccount();
  const asked = account !== undefined && readsAccount(method, path) ? { ...query, accountId: account } : query;
  let res: Response;
  try {
    res = await fetch(url(path, asked), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
      signal,
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new ApiError(0, 'NETWORK', 'The service could not be reached. Check the connection and try again.');
  }
  if (!res.ok) throw await errorOf(res);
  return res;
}

async function errorOf(res: Response): Promise<ApiError> {
  let code = 'HTTP_' + res.status;
  let message = `The service answered ${res.status} ${res.statusText}.`;
  try {
    const body = (await res.json()) as {
      error?: { code?: unknown; message?: unknown; details?: { fields?: { field: string; message: string }[] } };
    };
    if (typeof body.error?.code === 'string') code = body.error.code;
    if (typeof body.error?.message === 'string') message = body.error.message;
    const fields = body.error?.details?.fields;
    if (Array.isArray(fields) && fields.length > 0)
      // A message that names its field already ("q is required") is not prefixed with it again.
      message +=
        ' ' +
        fields.map((f) => (f.message.startsWith(`${f.field} `) ? f.message : `${f.field}: ${f.message}`)).join('; ');
  } catch {
    // not the JSON envelope: keep the status line
  }
  if (res.status === 401)
    message = 'The key was refused (unknown, revoked or expired). Sign out and sign in with a valid key.';
  if (res.status === 403) message = `This key may not do that. ${message}`;
  return new ApiError(res.status, code, message);
}

export const api = {
  get: async <T>(path: string, query?: Query, signal?: AbortSignal): Promise<T> =>
    (await (await request('GET', path, query, undefined, signal)).json()) as T,
  text: async (path: string, query?: Query): Promise<string> => (await request('GET', path, query)).text(),
  send: async <T>(method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> =>
    (await (await request(method, path, undefined, body)).json()) as T,
};

/** An error in words for the page, whatever was thrown (a string is the page's own words). */
export function describe(error: unknown): string {
  if (typeof error === 'string') return error;
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error) return `Something went wrong: ${error.message}`;
  return 'Something went wrong.';
}

/**
 * A download (the export) through fetch with the key in its header; the file is handed to the
 * browser as a blob, so the key never appears in a URL.
 */
export async function download(path: string, query: Query): Promise<string> {
  const res = await request('GET', path, query);
  const disposition = res.headers.get('Content-Disposition') ?? '';
  const name = /filename="([^"]+)"/.exec(disposition)?.[1] ?? 'audit-export';
  const blob = await res.blob();
  const href = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = href;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
  return name;
}
