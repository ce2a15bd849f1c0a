import { MAX_CHAIN_NAME_LENGTH, MAX_IDEMPOTENCY_KEY_LENGTH, MAX_REQUEST_ID_LENGTH } from './limits';

/**
 * Ids as we issue them: a type prefix and a ULID (docs/contract.md §2). An id that does not match is
 * answered like an unknown one (404), without a database round trip. Event, chain and account ids
 * take a first digit of 0–7 only: a ULID is 128 bits (26 digits carry 130), only such an id can be
 * stored (ulidToUuid), and no other was ever issued.
 */
export const EVENT_ID = /^evt_[0-7][0-9A-HJKMNP-TV-Z]{25}$/;
export const CHAIN_ID = /^chn_[0-7][0-9A-HJKMNP-TV-Z]{25}$/;
/** A chain's name, as the caller chooses it (an event's `chain`, the `name` filter of GET /v1/chains). */
export const CHAIN_NAME = new RegExp(`^[A-Za-z0-9._:-]{1,${MAX_CHAIN_NAME_LENGTH}}$`);
/** CHAIN_NAME in words, for error messages. */
export const CHAIN_NAME_TEXT = `1-${MAX_CHAIN_NAME_LENGTH} characters of A-Z a-z 0-9 . _ : -`;
/** An X-Request-Id the caller may choose (else the service makes a UUID, which matches too). */
export const REQUEST_ID = new RegExp(`^[A-Za-z0-9._:-]{1,${MAX_REQUEST_ID_LENGTH}}$`);
/** An Idempotency-Key (docs/contract.md §7): 1–255 printable ASCII characters, not starting with a space. */
export const IDEMPOTENCY_KEY = new RegExp(String.raw`^[\x21-\x7e][\x20-\x7e]{0,${MAX_IDEMPOTENCY_KEY_LENGTH - 1}}$`);
/** IDEMPOTENCY_KEY in words, for error messages and the OpenAPI description. */
export const IDEMPOTENCY_KEY_TEXT = `1-${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters, the first not a space`;
/** An account's id and a key's id as we issue them (docs/contract.md §2, §12): anything else is answered as unknown (404). */
export const ACCOUNT_ID = /^acc_[0-7][0-9A-HJKMNP-TV-Z]{25}$/;
export const KEY_ID = /^key_[0-9A-HJKMNP-TV-Z]{26}$/;
/** A stream destination's id (docs/contract.md §16): anything else is answered as unknown (404). */
export const DESTINATION_ID = /^dst_[0-9A-HJKMNP-TV-Z]{26}$/;
/** An erasure's id (docs/contract.md §17). */
export const ERASURE_ID = /^era_[0-9A-HJKMNP-TV-Z]{26}$/;
/** Chain names starting with this are the service's own (`_audit`): clients cannot append to them (docs/contract.md §12). */
export const RESERVED_CHAIN_PREFIX = '_';
/** A chain name clients may append to: not starting with RESERVED_CHAIN_PREFIX (with CHAIN_NAME). */
export const APPENDABLE_CHAIN_NAME = new RegExp(`^(?!${RESERVED_CHAIN_PREFIX})`);

/** Crockford's base 32, as ULIDs write it: a digit's value is its index. */
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** A character code's value as a base-32 digit and as a hex digit (-1: not one). */
const DIGIT = new Int8Array(128).fill(-1);
const NIBBLE = new Int8Array(128).fill(-1);
for (let i = 0; i < 32; i++) DIGIT[CROCKFORD.charCodeAt(i)] = i;
for (let i = 0; i < 16; i++) NIBBLE['0123456789abcdef'.charCodeAt(i)] = NIBBLE['0123456789ABCDEF'.charCodeAt(i)] = i;
/** Where byte i of a uuid's text (8-4-4-4-12 hex digits) starts. */
const UUID_BYTE_AT = Array.from({ length: 16 }, (_, i) => 2 * i + (i < 4 ? 0 : i < 6 ? 1 : i < 8 ? 2 : i < 10 ? 3 : 4));
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/** The value of `table` for the character at `at` of `text`, or a throw naming `what` where it has none. */
function valueAt(table: Int8Array, text: string, at: number, what: string): number {
  const code = text.charCodeAt(at);
  const value = code < 128 ? table[code]! : -1;
  if (value < 0) throw new Error(`not ${what}`);
  return value;
}

/**
 * `evt_01ARZ3NDEKTSV4RRFFQ69G5FAV` as the database stores it (migration 1765900000000): the ULID's 16
 * bytes as a `uuid`'s text (`01563e3a-b5d3-d676-4c61-efb99302bd5b`), the prefix implied by the column.
 * Big-endian both ways, so the bytes sort as the ULID's text does. Throws on anything but a 3-character
 * prefix, `_` and a ULID of 128 bits (the first digit 0–7): callers match ids first (EVENT_ID), so a
 * throw here is a bug, never a client's input.
 */
export function ulidToUuid(id: string): string {
  const what = 'a prefixed ULID of 128 bits';
  if (id.length !== 30 || id.charCodeAt(3) !== 95 || valueAt(DIGIT, id, 4, what) > 7) throw new Error(`not ${what}`);
  const d = (at: number) => valueAt(DIGIT, id, at, what);
  // 3 + 5 bits, then three runs of 8 digits (40 bits) to 5 bytes each.
  const bytes = [(d(4) << 5) | d(5)];
  for (let run = 6; run < 30; run += 8) {
    const [c0, c1, c2, c3, c4, c5, c6, c7] = [
      d(run),
      d(run + 1),
      d(run + 2),
      d(run + 3),
      d(run + 4),
      d(run + 5),
      d(run + 6),
      d(run + 7),
    ];
    bytes.push(
      (c0 << 3) | (c1 >> 2),
      ((c1 << 6) | (c2 << 1) | (c3 >> 4)) & 255,
      ((c3 << 4) | (c4 >> 1)) & 255,
      ((c4 << 7) | (c5 << 2) | (c6 >> 3)) & 255,
      ((c6 << 5) | c7) & 255,
    );
  }
  const h = bytes.map((byte) => HEX[byte]!);
  return `${h[0]}${h[1]}${h[2]}${h[3]}-${h[4]}${h[5]}-${h[6]}${h[7]}-${h[8]}${h[9]}-${h[10]}${h[11]}${h[12]}${h[13]}${h[14]}${h[15]}`;
}

/**
 * ulidToUuid of an id of `prefix` (`chn`), or null for a string that is no storable id of that kind:
 * a filter on it then matches nothing (`column = NULL`), where a client's value is compared, not
 * matched first (a `q` term's `chain_id:`); `evt_…` with a chain's ULID is no chain's id.
 */
export function ulidToUuidOrNull(id: string, prefix: string): string | null {
  if (!id.startsWith(`${prefix}_`)) return null;
  try {
    return ulidToUuid(id);
  } catch {
    return null;
  }
}

/** ulidToUuid's inverse: a stored `uuid` (the text pg gives) and the column's prefix to the id. */
export function uuidToUlid(prefix: string, uuid: string): string {
  if (uuid.length !== 36) throw new Error('not a uuid');
  const b = (i: number) => {
    const at = UUID_BYTE_AT[i]!;
    return (valueAt(NIBBLE, uuid, at, 'a uuid') << 4) | valueAt(NIBBLE, uuid, at + 1, 'a uuid');
  };
  const digit = (value: number) => CROCKFORD[value]!;
  const first = b(0);
  let text = `${prefix}_${digit(first >> 5)}${digit(first & 31)}`;
  for (let run = 1; run < 16; run += 5) {
    const [b0, b1, b2, b3, b4] = [b(run), b(run + 1), b(run + 2), b(run + 3), b(run + 4)];
    text +=
      digit(b0 >> 3) +
      digit(((b0 & 7) << 2) | (b1 >> 6)) +
      digit((b1 >> 1) & 31) +
      digit(((b1 & 1) << 4) | (b2 >> 4)) +
      digit(((b2 & 15) << 1) | (b3 >> 7)) +
      digit((b3 >> 2) & 31) +
      digit(((b3 & 3) << 3) | (b4 >> 5)) +
      digit(b4 & 31);
  }
  return text;
}
