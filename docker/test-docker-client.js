'use strict';
// HTTP client of docker/test-docker.sh (Node's fetch, no dependency). Only ever 127.0.0.1.
//   node docker/test-docker-client.js smoke <base> <key>           append one event, read it back, print its id
//   node docker/test-docker-client.js verifier-key <base>          print GET /v1/checkpoint-key
//   node docker/test-docker-client.js load <base> <key> <out.json> append (single and batch) until the
//        server goes away or 30 s pass; writes { acked: [ids of every 201], counts } to out.json
const [command, base, key, out] = process.argv.slice(2);
if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(base ?? '')) throw new Error('base must be http://127.0.0.1:<port>');
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

async function smoke() {
  const event = {
    actor: 'docker-test',
    action: 'smoke',
    resource: 'compose',
    context: { n: 1 },
    chain: 'docker-smoke',
  };
  const created = await fetch(`${base}/v1/events`, { method: 'POST', headers, body: JSON.stringify(event) });
  if (created.status !== 201) throw new Error(`append: ${created.status} ${await created.text()}`);
  const { data } = await created.json();
  const read = await fetch(`${base}/v1/events/${data.id}`, { headers });
  if (read.status !== 200) throw new Error(`read: ${read.status} ${await read.text()}`);
  const back = (await read.json()).data;
  if (back.id !== data.id || back.hash !== data.hash || back.actor !== event.actor)
    throw new Error(`read back another event: ${JSON.stringify(back)}`);
  console.log(data.id);
}

async function verifierKey() {
  const response = await fetch(`${base}/v1/checkpoint-key`);
  if (response.status !== 200) throw new Error(`checkpoint-key: ${response.status}`);
  console.log((await response.text()).trim());
}

async function load() {
  const acked = [];
  const counts = {};
  const deadline = Date.now() + 30_000;
  let gone = false;
  const count = (what) => (counts[what] = (counts[what] ?? 0) + 1);
  const worker = async (w) => {
    for (let i = 0; !gone && Date.now() < deadline; i++) {
      const batch = i % 4 === 3;
      const event = (j) => ({ actor: `worker-${w}`, action: 'load', context: { i, j }, chain: `load-${w % 4}` });
      const body = batch ? { events: Array.from({ length: 20 }, (_, j) => event(j)) } : event(0);
      let response;
      try {
        response = await fetch(`${base}/v1/events${batch ? '/batch' : ''}`, {
          method: 'POST',
          headers,
          body: JSON.stringify(body),
        });
      } catch {
        count('no answer'); // the server went away: the stop under test
        gone = true;
        return;
      }
      count(response.status);
      const json = await response.json().catch(() => ({}));
      if (response.status !== 201) continue;
      for (const e of batch ? json.data : [json.data]) acked.push(e.id);
    }
  };
  await Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)));
  require('node:fs').writeFileSync(out, JSON.stringify({ acked, counts }));
  console.log(`load: ${acked.length} events acknowledged, answers ${JSON.stringify(counts)}`);
}

({ smoke, 'verifier-key': verifierKey, load })[command]().catch((error) => {
  console.error(`${command}: ${error.message}`);
  process.exit(1);
});
