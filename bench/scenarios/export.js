'use strict';

const http = require('node:http');
const { ulidToUuid } = require('../lib/ids');
const { median, prng, spread } = require('../lib/stats');
const { SELECT } = require('./list');
const { probe, unavailable } = require('./common');

const MB = 1024 * 1024;

function exportPath(format, { after, before }) {
  return `/v1/events/export?${new URLSearchParams({ format, after, before }).toString()}`;
}

/** Downloads one export to the end; time to the last byte. */
function download(ctx, path) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = http.get(
      `${ctx.serviceUrl}${path}`,
      { headers: { authorization: ctx.headers.authorization } },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode,
            seconds: (performance.now() - started) / 1000,
            body: Buffer.concat(chunks),
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
  });
}

/** How many events the body holds, read the way a client would. */
function countEvents(format, body) {
  if (format === 'json') {
    const parsed = JSON.parse(body.toString('utf8'));
    return Array.isArray(parsed.data) ? parsed.data.length : -1;
  }
  const text = body.toString('utf8');
  return text.split('\r\n').filter((line) => line.length > 0).length - 1;
}

/** Scenario 4: export of 10,000 events as JSON and CSV; time and the server's RSS growth. */
async function exportScenario(ctx) {
  const { cfg, seed, log } = ctx;
  const count = Math.min(cfg.exportEvents, seed.total);
  const random = prng(11);
  const windowAt = () => {
    const k = Math.floor(random() * (seed.total - count + 1));
    return { after: seed.timeOf(k), before: seed.timeOf(k + count - 1) };
  };
  const title = (format) => `export of ${count.toLocaleString('en-US')} events as ${format.toUpperCase()}`;
  const check = await probe(ctx, exportPath('json', windowAt()));
  if (check.status !== 200) {
    return ['json', 'csv'].map((format) => ({
      id: `export-${format}`,
      title: title(format),
      unit: 's',
      available: unavailable(check),
    }));
  }
  const out = [];
  for (const format of ['json', 'csv']) {
    // A fresh process, so that heap an earlier scenario left behind cannot absorb what an export
    // needs. Growth is the peak RSS during one export minus the RSS just before it; the first
    // (cold) export counts too. RSS also climbs across exports until V8 collects the garbage of
    // earlier ones: that total is reported, not held against the target.
    await ctx.restartService();
    const idle = ctx.sampler.open();
    const cold = ctx.sampler.open();
    const first = await download(ctx, exportPath(format, windowAt()));
    const coldMemory = cold.close();
    const runs = [];
    const sqlRuns = [];
    for (let r = 0; r < cfg.exportRuns; r++) {
      const window = windowAt();
      const rss = ctx.sampler.open();
      const result = await download(ctx, exportPath(format, window));
      const memory = rss.close();
      const events = result.status === 200 ? countEvents(format, result.body) : -1;
      runs.push({
        seconds: result.seconds,
        status: result.status,
        bytes: result.body.length,
        events,
        rssStart: memory.start,
        rssPeak: memory.peak,
        rssGrowth: memory.growth,
      });
      const started = performance.now();
      const { rows } = await ctx.readPool.query(
        `${SELECT} WHERE e.account_id = $1 AND e."timestamp" >= $2 AND e."timestamp" <= $3 ORDER BY e."timestamp", e.id LIMIT ${count + 1}`,
        [ulidToUuid(ctx.accounts.bench), window.after, window.before],
      );
      sqlRuns.push({ seconds: (performance.now() - started) / 1000, events: rows.length });
      log(
        `  export ${format} run ${r + 1}/${cfg.exportRuns}: HTTP ${result.status}, ${events} events, ${(result.body.length / MB).toFixed(1)} MB in ${result.seconds.toFixed(3)} s, server RSS +${(memory.growth / MB).toFixed(1)} MB; SQL ${sqlRuns[r].seconds.toFixed(3)} s`,
      );
    }
    const sinceStart = idle.close();
    const time = median(runs.map((r) => r.seconds));
    const sqlTime = median(sqlRuns.map((r) => r.seconds));
    const growth = Math.max(coldMemory.growth, ...runs.map((r) => r.rssGrowth));
    const bad = runs.filter((r) => r.status !== 200 || r.events !== count).length;
    out.push({
      id: `export-${format}`,
      title: title(format),
      unit: 's',
      kind: 'time',
      service: { time, spread: spread(runs.map((r) => r.seconds)), failed: bad, runs },
      serverPeakRss: sinceStart.peak,
      rssGrowth: growth,
      rssIdle: sinceStart.start,
      cold: { seconds: first.seconds, status: first.status, rssGrowth: coldMemory.growth },
      rssGrowthAcrossExports: sinceStart.growth,
      baselines: [
        {
          key: 'sql',
          title: 'the same rows via pg (query only)',
          summary: { time: sqlTime, spread: spread(sqlRuns.map((r) => r.seconds)), runs: sqlRuns },
          target: null,
        },
      ],
      checks: [
        { label: 'time per export (median)', value: time, unit: 's', max: 0.5 },
        {
          label: 'server RSS growth during one export (max, cold one included)',
          value: growth / MB,
          unit: 'MB',
          max: 64,
        },
      ],
      notes: [
        `${runs.length - bad}/${runs.length} exports returned 200 with exactly ${count} events; ${(median(runs.map((r) => r.bytes)) / MB).toFixed(1)} MB each`,
        `server RSS: ${(sinceStart.start / MB).toFixed(0)} MB idle after a restart; +${(coldMemory.growth / MB).toFixed(1)} MB during the first (cold) export (${first.seconds.toFixed(3)} s), at most +${(Math.max(...runs.map((r) => r.rssGrowth)) / MB).toFixed(1)} MB during a warm one; ${(sinceStart.peak / MB).toFixed(0)} MB peak after ${runs.length + 1} exports (+${(sinceStart.growth / MB).toFixed(0)} MB: garbage of earlier exports not yet collected counts there)`,
      ],
    });
  }
  return out;
}

module.exports = { exportScenario };
