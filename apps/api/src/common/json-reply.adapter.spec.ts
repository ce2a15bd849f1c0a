import { StreamableFile } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import express, { Request, Response } from 'express';
import request from 'supertest';
import { JsonReplyAdapter } from './json-reply.adapter';

/** An app set up as configureApp does, whose one route answers through `adapter.reply`. */
function appReplyingWith(adapter: ExpressAdapter, body: () => unknown, status?: number, contentType?: string) {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.all('/', (_req: Request, res: Response) => {
    if (contentType) res.setHeader('Content-Type', contentType);
    adapter.reply(res, body(), status);
  });
  return app;
}

/** What a client sees: status, headers (but Date), body bytes. */
async function answer(
  app: express.Express,
  method: 'get' | 'head' | 'post',
  headers: Record<string, string>,
): Promise<unknown> {
  const res = await request(app)
    [method]('/')
    .set(headers)
    .buffer(true)
    .parse((r, done) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => done(null, Buffer.concat(chunks).toString('utf8')));
    });
  const { date: _date, ...rest } = res.headers as Record<string, string>;
  return { status: res.status, headers: rest, body: res.body as unknown };
}

const proof = { data: { chainId: 'c', size: 3, proof: ['ab'.repeat(32), 'cd'.repeat(32)], note: 'é ✓ "q" <x>' } };
const large = { data: Array.from({ length: 40 }, (_, i) => ({ i, hash: 'ef'.repeat(32) })) };

/** What the handler returns, its status (Nest's default when undefined), a Content-Type it set, the request. */
type Case = [
  string,
  () => unknown,
  number | undefined,
  string | undefined,
  'get' | 'head' | 'post',
  Record<string, string>,
];

const cases: Case[] = [
  ['a small object', () => proof, undefined, undefined, 'get', {}],
  ['an object of more than 1,000 characters', () => large, undefined, undefined, 'get', {}],
  ['an array', () => [1, 'two', null], undefined, undefined, 'get', {}],
  ['a 201', () => proof, 201, undefined, 'post', {}],
  ['HEAD', () => large, undefined, undefined, 'head', {}],
  ['If-None-Match: *', () => proof, undefined, undefined, 'get', { 'If-None-Match': '*' }],
  ['If-Modified-Since', () => proof, undefined, undefined, 'get', { 'If-Modified-Since': new Date().toUTCString() }],
  ['a 204 with a body', () => proof, 204, undefined, 'get', {}],
  ['a Content-Type already set', () => proof, undefined, 'text/plain', 'get', {}],
  ['a string', () => 'text', undefined, undefined, 'get', {}],
  ['nothing', () => undefined, undefined, undefined, 'get', {}],
  ['null', () => null, undefined, undefined, 'get', {}],
  ['a Buffer', () => Buffer.from('bytes'), undefined, undefined, 'get', {}],
  ['a StreamableFile', () => new StreamableFile(Buffer.from('file')), undefined, undefined, 'get', {}],
  ['an object whose toJSON is undefined', () => ({ toJSON: () => undefined }), undefined, undefined, 'get', {}],
];

describe('JsonReplyAdapter: the same answers as Nest’s ExpressAdapter', () => {
  it.each(cases)('%s', async (_, body, status, contentType, method, headers) => {
    const expected = await answer(appReplyingWith(new ExpressAdapter(), body, status, contentType), method, headers);
    const actual = await answer(appReplyingWith(new JsonReplyAdapter(), body, status, contentType), method, headers);
    expect(actual).toStrictEqual(expected);
  });
});
