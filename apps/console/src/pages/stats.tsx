import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { api } from '../api';
import { href, navigate, useLocation } from '../router';
import type { StatsAnswer, StatsQuery } from '../types';
import { Busy, ErrorText, isoToLocal, localToIso, Page, useLoad } from '../ui';

const DAY = 86_400_000;
const TOPS = ['action', 'actor', 'resource'] as const;

/** Statistics (docs/contract.md §13, §15): events per day or hour as a chart, the top actions, actors and resources as bars. */
export function StatsPage() {
  const { query } = useLocation();
  const before = query.get('before') ?? new Date(Math.ceil(Date.now() / 60_000) * 60_000).toISOString();
  const after = query.get('after') ?? new Date(Date.parse(before) - 7 * DAY).toISOString();
  const group = query.get('group') === 'hour' ? 'hour' : 'day';
  const q = query.get('q') ?? undefined;
  const stats = useLoad(
    async (signal) => {
      const ask = (group_by: StatsQuery['group_by'], limit?: number) =>
        api.get<StatsAnswer>('/v1/stats/events', { after, before, group_by, limit, q } satisfies StatsQuery, signal);
      const [series, ...tops] = await Promise.all([ask(group), ...TOPS.map((t) => ask(t, 10))]);
      return { series: series, tops };
    },
    [after, before, group, q],
  );
  return (
    <Page title="Statistics">
      <RangeForm after={after} before={before} group={group} q={q} />
      <ErrorText error={stats.error} />
      {stats.loading && <Busy label="Counting events" />}
      {stats.value && (
        <>
          <section aria-labelledby="over-time">
            <h2 id="over-time">
              Events per {group} ({stats.value.series.total} in all)
            </h2>
            <TimeChart data={stats.value.series.data} group={group} />
          </section>
          <div class="tops">
            {TOPS.map((name, i) => (
              <TopBars key={name} name={name} answer={stats.value!.tops[i]!} />
            ))}
          </div>
        </>
      )}
    </Page>
  );
}

function RangeForm(props: { after: string; before: string; group: string; q?: string }) {
  const [after, setAfter] = useState(isoToLocal(props.after));
  const [before, setBefore] = useState(isoToLocal(props.before));
  const [group, setGroup] = useState(props.group);
  const [q, setQ] = useState(props.q ?? '');
  return (
    <form
      class="search"
      onSubmit={(e) => {
        e.preventDefault();
        navigate(
          href('/statistics', {
            after: localToIso(after),
            before: localToIso(before),
            group,
            q: q.trim() || undefined,
          }),
        );
      }}
    >
      <div class="field grow">
        <label for="stats-q">Search</label>
        <input id="stats-q" type="search" value={q} maxLength={2000} onInput={(e) => setQ(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for="stats-after">From</label>
        <input id="stats-after" type="datetime-local" value={after} onInput={(e) => setAfter(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for="stats-before">To</label>
        <input
          id="stats-before"
          type="datetime-local"
          value={before}
          onInput={(e) => setBefore(e.currentTarget.value)}
        />
      </div>
      <div class="field">
        <label for="stats-group">Per</label>
        <select id="stats-group" value={group} onChange={(e) => setGroup(e.currentTarget.value)}>
          <option value="day">day</option>
          <option value="hour">hour</option>
        </select>
      </div>
      <button type="submit">Apply</button>
    </form>
  );
}

function TimeChart({ data, group }: { data: StatsAnswer['data']; group: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const xs = data.map((d) => Date.parse(d.key ?? '') / 1000);
    const ys = data.map((d) => d.count);
    const width = () => Math.max(280, element.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 240,
        scales: { x: { time: true } },
        legend: { show: false },
        series: [{}, { label: 'Events', stroke: '#1d4ed8', fill: 'rgba(29, 78, 216, 0.15)', width: 2 }],
        axes: [{}, { label: 'events' }],
      },
      [xs, ys],
      element,
    );
    const resize = () => plot.setSize({ width: width(), height: 240 });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      plot.destroy();
    };
  }, [data]);
  const peak = data.reduce((best, d) => (d.count > best.count ? d : best), {
    key: null,
    count: 0,
  } as StatsAnswer['data'][number]);
  return (
    <figure>
      <div ref={box} class="chart" role="img" aria-label={`Chart of events per ${group}`} />
      <figcaption>
        {data.length} {group}s; the busiest {peak.key ? `is ${peak.key} with ${peak.count}` : 'has none'}.
      </figcaption>
    </figure>
  );
}

function TopBars({ name, answer }: { name: string; answer: StatsAnswer }) {
  const max = Math.max(1, ...answer.data.map((d) => d.count));
  const id = `top-${name}`;
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>Top {name}s</h2>
      {answer.data.length === 0 && <p>None in this range.</p>}
      <ol class="bars">
        {answer.data.map((d) => (
          <li key={d.key ?? '(none)'}>
            <span class="bar-label">{d.key ?? '(none)'}</span>
            <span class="bar-track" aria-hidden="true">
              <span class="bar" style={{ width: `${(100 * d.count) / max}%` }} />
            </span>
            <span class="bar-count">{d.count}</span>
          </li>
        ))}
      </ol>
    </section>
  );
}
