'use strict';

/**
 * The HTTP ceiling of this machine: bare node:http reading the request body and answering a
 * constant JSON body, roughly the size of an appended event. Started as a child process by
 * bench/run.js, listening on 127.0.0.1:$PORT.
 */
const http = require('node:http');

const BODY = Buffer.from(
  JSON.stringify({
    data: {
      id: 'evt_01JDQ8Z5X3N4K7M2P9R6T0V1WA',
      actor: 'user_42',
      action: 'document.update',
      resource: 'doc:123',
      context: { ip: '10.0.0.1', session: 's_1234567890', n: 1 },
      chain: { id: 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X', name: 'c1', position: 1 },
      hash: '28a03bb8e2932f87c4639cbcd76ed9ff3de51f5951aa18c24b360a53308bba19',
      previousHash: '0000000000000000000000000000000000000000000000000000000000000000',
      timestamp: '2026-11-22T07:24:53.449Z',
      createdAt: '2026-11-22T07:24:53.449Z',
    },
  }),
);

const server = http.createServer((req, res) => {
  if (req.url === '/health/ready') {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"status":"ok"}}');
    return;
  }
  req.on('data', () => undefined);
  req.on('end', () => {
    res.writeHead(201, { 'content-type': 'application/json; charset=utf-8', 'content-length': BODY.length });
    res.end(BODY);
  });
});

server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
