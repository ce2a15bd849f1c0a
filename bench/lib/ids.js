'use strict';

const path = require('node:path');

/**
 * Ids as the database stores them. Since migration 1765900000000 (every event,
 * account and chain id column) an id is its ULID's 16 bytes, a `uuid`, whose text pg gives and takes
 * (`01563e3a-b5d3-d676-4c61-efb99302bd5b`); on the wire, in hashes and in the bench's own bookkeeping
 * it stays `evt_01ARZ3NDEKTSV4RRFFQ69G5FAV` (`acc_…`, `chn_…`). A database of an older build (the
 * `builds` scenario, bench/upgrade.js) stores the prefixed id itself as varchar text.
 *
 * The codec is the service's own (libs/common/src/ids.ts), as `npm run build` compiles it (as the
 * hashing lib, bench/lib/config.js `hashingLib`):
 * - ulidToUuid(`evt_…`) → the uuid's text (throws on anything but a prefixed 128-bit ULID);
 * - uuidToUlid('evt', uuid text) → `evt_…`.
 */
const CODEC = path.join(__dirname, '../../dist/apps/api/libs/common/src/ids');

function loadCodec() {
  try {
    return require(CODEC);
  } catch (error) {
    if (error && error.code === 'MODULE_NOT_FOUND' && String(error.message).includes(CODEC))
      throw new Error(
        `${path.relative(path.join(__dirname, '../..'), CODEC)}.js is missing: run \`npm run build\` first (npm run bench does)`,
      );
    throw error;
  }
}

const { ulidToUuid, uuidToUlid } = loadCodec();

/** A uuid's text as pg gives it (lowercase). */
const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * An id read from a column of either schema, as the API writes it (`prefix_` and the ULID): a uuid's
 * text (the current schema) converted with uuidToUlid, an id already prefixed (an older build's
 * varchar column) as it is. Anything else throws.
 */
function apiId(prefix, raw) {
  if (UUID_TEXT.test(raw)) return uuidToUlid(prefix, raw);
  if (typeof raw === 'string' && raw.startsWith(`${prefix}_`)) return raw;
  throw new Error(`not a stored ${prefix} id: ${raw}`);
}

const asIs = (id) => id;

/**
 * How the database `client` is connected to stores ids, column by column
 * (information_schema.columns.data_type 'uuid', else the varchar text of older builds):
 * - `isUuid(table, column)`;
 * - `type(table, column)`: the SQL type a bound id (or array of ids, `[]` added) is cast to, `uuid` or `varchar`;
 * - `stored(table, column)`: the function that gives an API id (`acc_…`, `chn_…`, `evt_…`) as that
 *   column stores it (ulidToUuid, or the id as it is).
 */
async function idColumns(client) {
  const { rows } = await client.query(
    `SELECT table_name || '.' || column_name AS name FROM information_schema.columns WHERE data_type = 'uuid'`,
  );
  const uuid = new Set(rows.map((row) => row.name));
  const isUuid = (table, column) => uuid.has(`${table}.${column}`);
  return {
    isUuid,
    type: (table, column) => (isUuid(table, column) ? 'uuid' : 'varchar'),
    stored: (table, column) => (isUuid(table, column) ? ulidToUuid : asIs),
  };
}

module.exports = { ulidToUuid, uuidToUlid, apiId, idColumns, UUID_TEXT };
