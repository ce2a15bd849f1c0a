'use strict';

const { ulidToUuid } = require('../lib/ids');
const { compareRuns, serviceLoad } = require('./common');

/** Properties of the bench's action schema and of every event both contenders send. */
const PROPERTIES = 20;

/** The context of event `k`: PROPERTIES members of the types the schema asks for. */
function contextOf(k) {
  const context = {};
  for (let p = 0; p < PROPERTIES; p++) {
    const kind = p % 4;
    context[`f${p}`] =
      kind === 0 ? `v_${k % 1000}_${p}` : kind === 1 ? (k + p) % 100000 : kind === 2 ? k % 2 === 0 : `id-${p}`;
  }
  return context;
}

/** Values the enum members take (every fourth member). */
const IDS = Array.from({ length: PROPERTIES }, (_, p) => `id-${p}`);

/**
 * An enforced schema of PROPERTIES typed, bounded, required context members (strings with lengths,
 * integers with bounds, booleans, enums; one member and the actor with a `pattern`, which RE2JS runs),
 * no other member allowed.
 */
function schemaOf() {
  const properties = {};
  for (let p = 0; p < PROPERTIES; p++) {
    const kind = p % 4;
    properties[`f${p}`] =
      kind === 0
        ? { type: 'string', minLength: 1, maxLength: 64 }
        : kind === 1
          ? { type: 'integer', minimum: 0, maximum: 1_000_000 }
          : kind === 2
            ? { type: 'boolean' }
            : p === 3
              ? { type: 'string', pattern: '^id-[0-9]+$' }
              : { type: 'string', enum: IDS };
  }
  return {
    type: 'object',
    properties: {
      actor: { type: 'string', pattern: '^user_[0-9]+$' },
      resource: { type: ['string', 'null'] },
      context: { type: 'object', properties, required: Object.keys(properties), additionalProperties: false },
    },
    required: ['actor', 'context'],
  };
}

/**
 * Issue 42's target: single appends (64 chains, BENCH_CONNECTIONS) of events whose action has an
 * enforced action schema of 20 properties (contract §19), against the same appends, the same
 * events, of an action without a schema, in the same account and run. Target ≥ 0.95×.
 */
async function schemasScenario(ctx) {
  const { cfg } = ctx;
  const res = await fetch(`${ctx.serviceUrl}/v1/accounts/${ctx.accounts.ingest}/schemas/bench.schema`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${ctx.keys.ingestAdmin}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ schema: schemaOf(), mode: 'enforce' }),
  });
  if (res.status !== 201) throw new Error(`PUT of the bench's schema answered ${res.status}: ${await res.text()}`);
  const contender = (key, action, prefix) => {
    let k = 0;
    const next = () => {
      const n = k++;
      const body = {
        actor: `user_${n % 1000}`,
        action,
        resource: `doc:${n % 5000}`,
        context: contextOf(n),
        chain: `${prefix}-${n % 64}`,
      };
      return { method: 'POST', path: '/v1/events', body: JSON.stringify(body) };
    };
    return { key, run: (seconds) => serviceLoad(ctx, cfg.ingestConnections, seconds, next) };
  };
  const result = await compareRuns({
    ctx,
    label: 'action schemas, single',
    contenders: [contender('enforced', 'bench.schema', 'sch'), contender('none', 'bench.noschema', 'nosch')],
  });
  const { rows } = await ctx.db.query(
    `SELECT action, count(*)::int AS events, count(schema_id)::int AS checked, count(*) FILTER (WHERE schema_valid)::int AS valid
       FROM events WHERE account_id = $1 AND action IN ('bench.schema', 'bench.noschema') GROUP BY 1`,
    [ulidToUuid(ctx.accounts.ingest)],
  );
  const of = (action) => rows.find((r) => r.action === action) ?? { events: 0, checked: 0, valid: 0 };
  const [checked, plain] = [of('bench.schema'), of('bench.noschema')];
  if (
    checked.events === 0 ||
    checked.checked !== checked.events ||
    checked.valid !== checked.events ||
    plain.checked !== 0
  )
    throw new Error(`the events were not checked as compared: ${JSON.stringify(rows)}`);
  return [
    {
      id: 'schemas-single',
      title: `ingest of events under an enforced ${PROPERTIES}-property action schema, ${cfg.ingestConnections} connections over 64 chains`,
      unit: 'events/s',
      service: result.enforced,
      baselines: [
        {
          key: 'none',
          title: 'the same events of an action without a schema',
          summary: result.none,
          target: { minRatio: 0.95 },
        },
      ],
      notes: [
        `after the run: ${checked.events.toLocaleString('en-US')} events checked (each recording the version, all valid), ${plain.events.toLocaleString('en-US')} unchecked`,
      ],
    },
  ];
}

module.exports = { schemasScenario };
