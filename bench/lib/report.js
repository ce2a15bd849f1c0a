'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { median } = require('./stats');

const MB = 1024 * 1024;
const num = (n) => (n === null || n === undefined || !Number.isFinite(n) ? '—' : Math.round(n).toLocaleString('en-US'));
const ms = (n) => (n === null || n === undefined ? '—' : `${n < 10 ? n.toFixed(1) : Math.round(n)} ms`);
const secs = (n) => (n === null || n === undefined ? '—' : `${n.toFixed(3)} s`);
const pct = (n) => (n === null || n === undefined ? '—' : `${Math.round(n * 100)}%`);

function value(row, summary) {
  if (!summary) return '—';
  return row.kind === 'time' ? secs(summary.time) : `${num(summary.throughput)} ${row.unit}`;
}

function noise(row, summary) {
  if (!summary || !summary.spread) return '—';
  const { min, max, relative } = summary.spread;
  const range = row.kind === 'time' ? `${min.toFixed(3)}–${max.toFixed(3)} s` : `${num(min)}–${num(max)}`;
  return `${range} (±${pct(relative / 2)})`;
}

/**
 * Service figure / baseline figure: > 1 means the service does more per second (or is faster).
 * Throughputs measured in interleaved runs (common.js compareRuns: service, baseline, service, …)
 * are compared run by run, and the median of those ratios is the figure: each pair ran minutes
 * apart at most, so drift of the machine (seen here: both contenders 40 % faster over a 7-run
 * scenario) cancels, where the ratio of the two medians would compare runs of different moments.
 * That ratio of medians is still reported (`ratioOfMedians`).
 */
function ratioOf(row, baseline) {
  if (!row.service || !baseline.summary) return null;
  if (row.kind === 'time') return baseline.summary.time / row.service.time;
  const own = row.service.runs || [];
  const theirs = baseline.summary.runs || [];
  if (own.length > 0 && own.length === theirs.length && theirs.every((r) => r.throughput > 0))
    return median(own.map((r, i) => r.throughput / theirs[i].throughput));
  return ratioOfMedians(row, baseline);
}

function ratioOfMedians(row, baseline) {
  if (!row.service || !baseline.summary) return null;
  if (row.kind === 'time') return baseline.summary.time / row.service.time;
  return baseline.summary.throughput ? row.service.throughput / baseline.summary.throughput : null;
}

function ratioText(row, baseline) {
  const ratio = ratioOf(row, baseline);
  if (ratio === null) return '—';
  const medians = ratioOfMedians(row, baseline);
  return medians === null || Math.abs(medians - ratio) < 0.005
    ? `${ratio.toFixed(2)}×`
    : `${ratio.toFixed(2)}× (medians ${medians.toFixed(2)}×)`;
}

function checkText(check) {
  const v =
    check.unit === 'ms'
      ? ms(check.value)
      : check.unit === 's'
        ? secs(check.value)
        : check.unit === 'MB'
          ? `${check.value.toFixed(1)} MB`
          : check.unit === '×' || check.unit === '%'
            ? `${check.value === null ? '—' : check.value.toFixed(check.unit === '×' ? 2 : 1)} ${check.unit}`
            : `${num(check.value)} ${check.unit}`;
  const bound =
    check.max !== undefined ? `≤ ${check.max}` : `≥ ${Number.isInteger(check.min) ? num(check.min) : check.min}`;
  return { actual: v, target: `${bound} ${check.unit}` };
}

/** Every target of the issue, measured: [{ scenario, label, actual, target, pass }]. */
function evaluate(results) {
  const targets = [];
  for (const row of results) {
    if (row.available) continue;
    for (const baseline of row.baselines || []) {
      if (!baseline.target) continue;
      const ratio = ratioOf(row, baseline);
      targets.push({
        scenario: row.id,
        label: `ratio to ${baseline.title}`,
        actual: ratioText(row, baseline),
        target: `≥ ${baseline.target.minRatio}×`, // 0.95 stays 0.95 (toFixed(1) showed it as 0.9)
        pass: ratio !== null && ratio >= baseline.target.minRatio,
      });
    }
    for (const check of row.checks || []) {
      const { actual, target } = checkText(check);
      const pass =
        check.value !== null &&
        check.value !== undefined &&
        (check.max !== undefined ? check.value <= check.max : check.value >= check.min);
      targets.push({ scenario: row.id, label: check.label, actual, target, pass });
    }
    if (row.service && row.service.failed > 0) {
      targets.push({
        scenario: row.id,
        label: 'every request succeeded',
        actual: `${row.service.failed} failed`,
        target: '0 failed',
        pass: false,
      });
    }
    for (const baseline of row.baselines || []) {
      if (!baseline.summary || !(baseline.summary.failed > 0)) continue;
      targets.push({
        scenario: row.id,
        label: `every request of ${baseline.title} succeeded`,
        actual: `${baseline.summary.failed} failed`,
        target: '0 failed',
        pass: false,
      });
    }
  }
  return targets;
}

const HEADER = [
  '#',
  'Scenario',
  'Service (median)',
  'p50',
  'p99',
  'Runs: min–max (spread)',
  'Baseline (same run)',
  'Baseline (median)',
  'Ratio',
  'Target',
  'Result',
];

function tableRows(results, targets) {
  const rows = [];
  results.forEach((row, index) => {
    const n = String(index + 1);
    if (row.available) {
      rows.push([n, row.title, row.available, '', '', '', '', '', '', '', '—']);
      return;
    }
    const own = targets.filter((t) => t.scenario === row.id && !t.label.startsWith('ratio to '));
    // A row without a baseline (the tail) still gets its line, with its own targets.
    const baselines = row.baselines && row.baselines.length > 0 ? row.baselines : [null];
    baselines.forEach((baseline, i) => {
      const ratioTarget =
        baseline && targets.find((t) => t.scenario === row.id && t.label === `ratio to ${baseline.title}`);
      const checks = i === 0 ? own : [];
      const targetText =
        [...(ratioTarget ? [ratioTarget.target] : []), ...checks.map((c) => `${c.label} ${c.target}`)].join('; ') ||
        'reported';
      const all = [...(ratioTarget ? [ratioTarget] : []), ...checks];
      const result =
        all.length === 0
          ? '—'
          : all.every((t) => t.pass)
            ? 'PASS'
            : `MISS (${all
                .filter((t) => !t.pass)
                .map((t) => `${t.label.replace(/^ratio to .*/, 'ratio')} ${t.actual}`)
                .join(', ')})`;
      rows.push([
        i === 0 ? n : '',
        i === 0 ? row.title : '〃',
        value(row, row.service),
        row.kind === 'time' ? '—' : ms(row.service.p50),
        row.kind === 'time' ? '—' : ms(row.service.p99),
        noise(row, row.service),
        baseline ? baseline.title : '—',
        baseline ? value(row, baseline.summary) : '—',
        baseline ? ratioText(row, baseline) : '—',
        targetText,
        result,
      ]);
    });
  });
  return rows;
}

function textTable(rows) {
  const all = [HEADER, ...rows];
  const widths = HEADER.map((_, c) => Math.max(...all.map((r) => String(r[c]).length)));
  const line = (r) => r.map((cell, c) => String(cell).padEnd(widths[c])).join(' │ ');
  return [line(HEADER), widths.map((w) => '─'.repeat(w)).join('─┼─'), ...rows.map(line)].join('\n');
}

function markdownTable(rows) {
  const esc = (cell) => String(cell).replace(/\|/g, '\\|');
  return [
    `| ${HEADER.join(' | ')} |`,
    `|${HEADER.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ].join('\n');
}

/** How a run was made, in one line (the summary's and the full report's). */
function runLine(cfg) {
  return `Run: ${cfg.runs} runs × ${cfg.seconds} s per figure (after a ${cfg.warmupSeconds} s warm-up), medians shown`;
}

function machineLine(env) {
  return `${env.cpus} × ${env.cpuModel}, ${env.memoryGb} GB RAM · Node ${env.node} · ${env.postgres} · git ${env.commit}`;
}

/** Every target as one line: `PASS · scenario · label: actual (target …)`. */
function targetLine(t) {
  return `${t.pass ? 'PASS' : 'MISS'} · ${t.scenario} · ${t.label}: ${t.actual} (target ${t.target})`;
}

/**
 * The run's summary, the file git keeps (bench/results/<stamp>.md): date, machine and commit, CPU
 * reference, the table with PASS/MISS, the targets missed, the scenarios' own notes. Everything
 * longer (settings, seeding, every target, CPU, load and status codes per scenario, raw figures)
 * is in the raw report beside it (`rawName`, under bench/results/raw/, which git ignores).
 */
function summaryMarkdown(report, rows, rawName) {
  const { environment: env, config: cfg } = report;
  const missed = report.targets.filter((t) => !t.pass);
  const notes = report.scenarios.flatMap((s) => (s.notes || []).map((note) => `- ${s.id}: ${note}`));
  const logProblems = report.serviceLogProblems && report.serviceLogProblems.count;
  const lines = [
    `# Benchmark ${report.startedAt}`,
    '',
    machineLine(env),
    ...(env.cpuReference
      ? [`CPU reference: one thread hashes ${env.cpuReference.toLocaleString('en-US')} events/s.`]
      : []),
    `${runLine(cfg)}; how figures and ratios are made: bench/README.md.`,
    '',
    markdownTable(rows),
    '',
    `Targets: ${report.targets.length - missed.length} PASS, ${missed.length} MISS.`,
    ...(missed.length > 0 ? ['', ...missed.map((t) => `- ${targetLine(t)}`)] : []),
    ...(notes.length > 0 || logProblems ? ['', '## Notes', '', ...notes] : []),
    ...(logProblems ? [`- service log: ${logProblems} WARN/ERROR lines (the first in the raw report)`] : []),
    '',
    `Raw report (settings, seeding, every target, CPU, load and status codes per scenario; figures of every run): \`bench/results/raw/${rawName}.md\` and \`.json\`, not in git.`,
    '',
  ];
  return lines.join('\n');
}

function markdownReport(report, rows) {
  const { environment: env, config: cfg, seeding } = report;
  const lines = [
    `# Benchmark ${report.startedAt}`,
    '',
    machineLine(env),
    ...(env.cpuReference
      ? [
          `CPU reference: one thread hashes ${env.cpuReference.toLocaleString('en-US')} events/s (computeEventHash of one fixed event; compare it between results before comparing absolute figures).`,
        ]
      : []),
    `PostgreSQL settings: ${Object.entries(env.postgresSettings)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}`,
    `Load average at start: ${env.loadAverageAtStart.join(', ')} (other work on the machine shows as \`other\` in the CPU notes below).`,
    `Run: ${cfg.runs} runs × ${cfg.seconds} s per figure (after a ${cfg.warmupSeconds} s warm-up), medians shown; a throughput ratio is the median of the run-by-run ratios of interleaved runs (the ratio of the two medians in brackets when it differs); spread = (max − min) / median / 2 of the runs' throughput.`,
    `Ingest: ${cfg.ingestConnections} connections / pg clients. Reads: ${cfg.readConnections} connections, SQL baselines on a pool of ${cfg.readPoolSize} (the service's DATABASE_POOL_SIZE). Load generator, service and PostgreSQL share the machine.`,
    seeding
      ? `Seeding: ${num(seeding.events)} events over ${num(seeding.chains)} chains in ${seeding.seconds.toFixed(1)} s = **${num(seeding.rate)} events/s** (real hashes; one COPY of ${seeding.copySeconds.toFixed(1)} s, then ${seeding.rebuiltIndexes.length} secondary indexes rebuilt), then VACUUM ANALYZE ${seeding.vacuumSeconds.toFixed(1)} s.`
      : 'Seeding: skipped (no read scenario selected).',
    `Server peak RSS over the whole run: ${(report.serverPeakRss / MB).toFixed(0)} MB. Total run time: ${report.durationSeconds.toFixed(0)} s.`,
    '',
    markdownTable(rows),
    '',
    '## Targets',
    '',
    ...report.targets.map((t) => `- ${targetLine(t)}`),
    '',
    '## Notes',
    '',
    ...report.scenarios.flatMap((s) => (s.notes || []).map((note) => `- ${s.id}: ${note}`)),
    ...report.scenarios
      .filter((s) => s.service && s.service.runs && s.service.runs.some((r) => r.cpu))
      .map((s) => `- ${s.id}: CPU in cores of ${report.environment.cpus} (median of runs) · ${cpuLine(s)}`),
    ...report.scenarios
      .filter((s) => s.loadAverage)
      .map(
        (s) =>
          `- ${s.id}: machine load average (1 min) ${s.loadAverage.before.toFixed(1)} before, ${s.loadAverage.after.toFixed(1)} after`,
      ),
    ...report.scenarios
      .filter((s) => s.service && s.service.statusCodes && Object.keys(s.service.statusCodes).length > 0)
      .map((s) => `- ${s.id}: status codes ${JSON.stringify(s.service.statusCodes)}`),
    ...(report.serviceLogProblems && report.serviceLogProblems.count > 0
      ? [
          `- service log: ${report.serviceLogProblems.count} WARN/ERROR lines, first: ${report.serviceLogProblems.first.map((l) => JSON.stringify(l)).join(', ')}`,
        ]
      : []),
    '',
  ];
  return lines.join('\n');
}

function cpuOf(summary) {
  if (summary.cpu) return summary.cpu;
  const runs = (summary.runs || []).filter((r) => r.cpu);
  if (runs.length === 0) return null;
  const keys = Object.keys(runs[0].cpu);
  const mid = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return Object.fromEntries(keys.map((k) => [k, mid(runs.map((r) => r.cpu[k] || 0))]));
}

/** "service: service 1.0, postgres 0.7, …; raw pg: …" */
function cpuLine(row) {
  const parts = [
    ['service', row.service],
    ...(row.baselines || []).map((b) => [b.key, b.summary]),
    ...(row.single ? [['service @1 conn', row.single]] : []),
  ];
  return parts
    .map(([name, summary]) => {
      const cpu = summary && cpuOf(summary);
      return cpu
        ? `${name} run: ${Object.entries(cpu)
            .map(([k, v]) => `${k} ${v.toFixed(2)}`)
            .join(', ')}`
        : null;
    })
    .filter(Boolean)
    .join('; ');
}

function stamp(date) {
  const iso = date.toISOString();
  return `${iso.slice(0, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}`;
}

/**
 * Writes the run's summary, bench/results/<stamp>.md (kept in git), and its raw report,
 * bench/results/raw/<stamp>.md and .json (ignored by git: every figure, for local inspection).
 */
function writeReport(dir, report) {
  const targets = evaluate(report.scenarios);
  report.targets = targets;
  const rows = tableRows(report.scenarios, targets);
  const name = stamp(new Date(report.startedAt));
  const rawDir = path.join(dir, 'raw');
  fs.mkdirSync(rawDir, { recursive: true });
  const summary = path.join(dir, `${name}.md`);
  const raw = path.join(rawDir, name);
  fs.writeFileSync(`${raw}.json`, `${JSON.stringify(report, null, 2)}\n`);
  fs.writeFileSync(`${raw}.md`, markdownReport(report, rows));
  fs.writeFileSync(summary, summaryMarkdown(report, rows, name));
  return { text: textTable(rows), files: [summary, `${raw}.md`, `${raw}.json`], targets };
}

module.exports = { writeReport, evaluate, summaryMarkdown, markdownReport, tableRows };
