import { Readable } from 'node:stream';
import { serverSentEvents } from './sse';

async function read(chunks: string[]) {
  const source = Readable.from(chunks.map((c) => new TextEncoder().encode(c)));
  const out = [];
  for await (const e of serverSentEvents(source)) out.push(e);
  return out;
}

describe('the Server-Sent Events reader', () => {
  it('reads events split anywhere across chunks, skipping comments, with CRLF or LF', async () => {
    const events = await read([
      ': keep-alive\n\nid: 1\nevent: ev',
      'ent\ndata: {"a":1}\r\n\r',
      '\nid: 2\ndata: x\ndata: y\n\n',
    ]);
    expect(events).toEqual([
      { id: '1', event: 'event', data: '{"a":1}' },
      { id: '2', event: 'message', data: 'x\ny' },
    ]);
  });

  it('keeps the last id for events that set none', async () => {
    expect(await read(['id: 5\ndata: a\n\ndata: b\n\n'])).toEqual([
      { id: '5', event: 'message', data: 'a' },
      { id: '5', event: 'message', data: 'b' },
    ]);
  });
});
