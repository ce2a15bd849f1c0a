'use strict';

/**
 * Where a service CPU profile (.cpuprofile) spent its time: self time per package (or "app" for
 * this repository's code, "node" for Node's internals), then the heaviest functions.
 * Usage: node bench/profile-summary.js <file.cpuprofile> [top=25]
 */
const fs = require('node:fs');

function owner(url) {
  if (!url) return 'native / V8';
  if (url.startsWith('node:')) return 'node';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + 13).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  const app = /\/dist\/apps\/\w+\/(.*)$/.exec(url);
  return app ? `app: ${app[1].split('/').slice(0, 4).join('/')}` : url;
}

function summarize(profile, top = 25) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const hits = new Map();
  for (const id of profile.samples) hits.set(id, (hits.get(id) || 0) + 1);
  const total = profile.samples.length;
  const byOwner = new Map();
  const byFunction = new Map();
  for (const [id, count] of hits) {
    const node = byId.get(id);
    const { functionName, url, lineNumber } = node.callFrame;
    const name = functionName || '(anonymous)';
    const who = ['(idle)', '(program)', '(garbage collector)'].includes(name) ? name : owner(url);
    byOwner.set(who, (byOwner.get(who) || 0) + count);
    const key = `${name} ${who}${url ? `:${lineNumber + 1}` : ''}`;
    byFunction.set(key, (byFunction.get(key) || 0) + count);
  }
  const busy = total - (byOwner.get('(idle)') || 0);
  const rows = (map) =>
    [...map.entries()]
      .filter(([k]) => !k.startsWith('(idle)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, v]) => `${((100 * v) / busy).toFixed(1).padStart(5)}%  ${k}`);
  const seconds = (profile.endTime - profile.startTime) / 1e6;
  return [
    `${seconds.toFixed(1)} s profiled, busy ${((100 * busy) / total).toFixed(0)}% of the samples; shares below are of the busy samples`,
    '',
    'self time by owner:',
    ...rows(byOwner),
    '',
    'self time by function:',
    ...rows(byFunction),
  ].join('\n');
}

if (require.main === module) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node bench/profile-summary.js <file.cpuprofile> [top]');
    process.exit(2);
  }
  console.log(summarize(JSON.parse(fs.readFileSync(file, 'utf8')), Number(top) || 25));
}

module.exports = { summarize };
