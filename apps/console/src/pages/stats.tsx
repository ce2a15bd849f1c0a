import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { fromField, toField, useZone, zoneLabel, type Zone } from '../clock';
import { href, navigate, useLocation } from '../router';
import type { StatsAnswer, StatsQuery } from '../types';
import { Busy, ErrorText, Page, TimeField, useLoad } from '../ui';
import { bucketLabel, defaultRange, tickEvery } from './stats-range';

const TOPS = ['action', 'actor', 'resource'] as const;
type Group = 'day' | 'hour';

/** Statistics (docs/contract.md §13, §15): events per day or hour as bars, the top actions, actors and resources. */
export function StatsPage() {
  const { query } = useLocation();
  const group: Group = query.get('group') === 'hour' ? 'hour' : 'day';
  const range = defaultRange(group, Date.now());
  const before = query.get('before') ?? range.before;
  const after = query.get('after') ?? range.after;
  const q = query.get('q') ?? undefined;
  const stats = useLoad(
    async (signal) => {
      const ask = (group_by: StatsQuery['group_by'], limit?: number) =>
        api.get<StatsAnswer>('/v1/stats/events', { after, before, group_by, limit, q } satisfies StatsQuery, signal);
      const [series, ...tops] = await Promise.all([ask(group), ...TOPS.map((t) => ask(t, 10))]);
      return { series: series, tops };
    },
    [after, before, group, q, query.get('account')],
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
            <BarChart data={stats.value.series.data} group={group} />
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

function RangeForm(props: { after: string; before: string; group: Group; q?: string }) {
  const z = useZone();
  const [after, setAfter] = useState(toField(props.after, z));
  const [before, setBefore] = useState(toField(props.before, z));
  const [group, setGroup] = useState<string>(props.group);
  const [q, setQ] = useState(props.q ?? '');
  // The fields show the range in the console's zone: a switch of zone shows the same instants anew.
  useEffect(() => {
    setAfter(toField(props.after, z));
    setBefore(toField(props.before, z));
  }, [props.after, props.before, z]);
  return (
    <form
      class="search"
      onSubmit={(e) => {
        e.preventDefault();
        navigate(
          href('/statistics', {
            after: fromField(after, z),
            before: fromField(before, z),
            group,
            q: q.trim() || undefined,
            account: new URLSearchParams(location.search).get('account') ?? undefined,
          }),
        );
      }}
    >
      <div class="field grow">
        <label for="stats-q">Search</label>
        <input id="stats-q" type="search" value={q} maxLength={2000} onInput={(e) => setQ(e.currentTarget.value)} />
      </div>
      <TimeField id="stats-after" label="From" value={after} onInput={setAfter} />
      <TimeField id="stats-before" label="To" value={before} onInput={setBefore} />
      <div class="field">
        <label for="stats-group">Per</label>
        <select id="stats-group" value={group} onChange={(e) => setGroup(e.currentTarget.value)}>
          <option value="day">day (UTC days)</option>
          <option value="hour">hour</option>
        </select>
      </div>
      <button type="submit">Apply</button>
    </form>
  );
}

const HEIGHT = 240;
const PAD = { left: 44, right: 8, top: 10, bottom: 40 };

/**
 * Counts per bucket as bars (issue 40 item 2), one tick per bucket and its label where there is room.
 * Day buckets are the service's UTC days (docs/contract.md §13) and say so; hour buckets are labelled
 * in the console's zone. Drawn as SVG at the box's own width, so its text stays readable at 360 px.
 */
function BarChart({ data, group }: { data: StatsAnswer['data']; group: Group }) {
  const z = useZone();
  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(640);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const measure = () => setWidth(Math.max(280, element.clientWidth));
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  const max = Math.max(1, ...data.map((d) => d.count));
  const plotWidth = width - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const step = plotWidth / Math.max(1, data.length);
  // A label's width with room around it: `Dec 17` and `Dec 17 14:00` at 12 px.
  const every = tickEvery(data.length, plotWidth, group === 'day' ? 60 : 100);
  const yTicks = [0, Math.ceil(max / 2), max].filter((v, i, all) => all.indexOf(v) === i);
  const y = (count: number) => PAD.top + plotHeight - (plotHeight * count) / max;
  const axisZone: Zone = group === 'day' ? 'utc' : z;
  const peak = data.reduce((best, d) => (d.count > best.count ? d : best), {
    key: null,
    count: 0,
  } as StatsAnswer['data'][number]);
  const axisName = group === 'day' ? 'day (UTC days)' : `hour (${zoneLabel(z)})`;
  const counted = group === 'day' ? `${data.length} days (UTC days)` : `${data.length} hours (${zoneLabel(z)})`;
  return (
    <figure>
      <div ref={box} class="chart">
        <svg
          width={width}
          height={HEIGHT}
          viewBox={`0 0 ${width} ${HEIGHT}`}
          role="img"
          aria-label={`Bar chart of events per ${axisName}: ${data.length} bars, the largest ${max}`}
        >
          {yTicks.map((v) => (
            <g key={`y${v}`}>
              <line class="grid" x1={PAD.left} x2={width - PAD.right} y1={y(v)} y2={y(v)} />
              <text x={PAD.left - 6} y={y(v) + 4} text-anchor="end">
                {v}
              </text>
            </g>
          ))}
          {data.map((d, i) => {
            const x = PAD.left + i * step;
            const label = bucketLabel(d.key ?? '', group, axisZone);
            return (
              <g key={d.key ?? i}>
                <rect
                  class="bar-rect"
                  x={x + step * 0.15}
                  y={y(d.count)}
                  width={Math.max(1, step * 0.7)}
                  height={PAD.top + plotHeight - y(d.count)}
                >
                  <title>{`${label.full}: ${d.count}`}</title>
                </rect>
                <line
                  class="tick"
                  x1={x + step / 2}
                  x2={x + step / 2}
                  y1={PAD.top + plotHeight}
                  y2={PAD.top + plotHeight + 4}
                />
                {i % every === 0 && (
                  <text class="tick-label" x={x + step / 2} y={PAD.top + plotHeight + 18} text-anchor="middle">
                    {label.short}
                  </text>
                )}
              </g>
            );
          })}
          <line class="axis" x1={PAD.left} x2={width - PAD.right} y1={PAD.top + plotHeight} y2={PAD.top + plotHeight} />
          <text x={PAD.left + plotWidth / 2} y={HEIGHT - 4} text-anchor="middle">
            {axisName}
          </text>
        </svg>
      </div>
      <figcaption>
        {counted}; the busiest{' '}
        {peak.key ? (
          <>
            is <span class="instant">{bucketLabel(peak.key, group, axisZone).full}</span> with {peak.count}
          </>
        ) : (
          'has none'
        )}
        .
      </figcaption>
    </figure>
  );
}

/** What the top lists call a group without a key: an actor is always given, so a missing one was erased. */
function keyless(name: (typeof TOPS)[number]) {
  return name === 'actor' ? <span class="erased-mark">erased</span> : '(none)';
}

function TopBars({ name, answer }: { name: (typeof TOPS)[number]; answer: StatsAnswer }) {
  const max = Math.max(1, ...answer.data.map((d) => d.count));
  const id = `top-${name}`;
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>Top {name}s</h2>
      {answer.data.length === 0 && <p>None in this range.</p>}
      <ol class="bars">
        {answer.data.map((d) => (
          <li key={d.key ?? '(none)'}>
            {d.key === null ? (
              <span class="bar-label">{keyless(name)}</span>
            ) : (
              // Cut with an ellipsis; the whole label on hover, or on focus from the keyboard.
              <span class="bar-label" title={d.key} tabIndex={0}>
                {d.key}
              </span>
            )}
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
