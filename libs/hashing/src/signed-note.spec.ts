import { generateKeyPairSync } from 'node:crypto';
import {
  decodeBase64,
  ed25519PrivateKeyFromSeed,
  ed25519PublicKeyBytes,
  formatCheckpoint,
  formatVerifierKey,
  noteKeyId,
  NoteFormatError,
  parseCheckpoint,
  parseNote,
  parseVerifierKey,
  signNote,
  verifyNote,
} from './signed-note';
import {
  CHECKPOINT_KEY_NAME,
  chainCheckpointText,
  signChainCheckpoint,
  verifyChainCheckpoint,
} from './chain-checkpoint';

/*
 * Interoperability vectors published with the Go reference implementation of signed notes
 * (golang.org/x/mod/sumdb/note, note_test.go). The private key is Go's "PRIVATE+KEY+<name>+<id>+
 * base64(0x01 || seed)" encoding; Ed25519 signatures are deterministic, so our signature over
 * the same text must be byte-identical to theirs.
 */
const PETER_SKEY_SEED = Buffer.from('AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz', 'base64').subarray(1);
const PETER_VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const ENOCH_VKEY = 'EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop';
const TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const PETER_SIG =
  '— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n';
const ENOCH_SIG =
  '— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n';
const peterKey = ed25519PrivateKeyFromSeed(PETER_SKEY_SEED);

describe('verifier keys', () => {
  it('formats the Go reference verifier key from the reference seed', () => {
    expect(formatVerifierKey('PeterNeumann', peterKey)).toBe(PETER_VKEY);
  });

  it('computes the key id as SHA-256(name || 0x0A || 0x01 || key)[:4]', () => {
    expect(noteKeyId('PeterNeumann', ed25519PublicKeyBytes(peterKey)).toString('hex')).toBe('c74f20a3');
  });

  it('parses a verifier key', () => {
    const sut = parseVerifierKey(PETER_VKEY);
    expect(sut.name).toBe('PeterNeumann');
    expect(sut.keyId.toString('hex')).toBe('c74f20a3');
    expect(ed25519PublicKeyBytes(sut.publicKey)).toEqual(ed25519PublicKeyBytes(peterKey));
  });

  it.each([
    ['a missing part', 'PeterNeumann+c74f20a3'],
    ['a wrong key id', 'PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'],
    ['another name for the key id', 'PeterNeuman+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'],
    ['an unknown algorithm', 'PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'],
    ['a key of the wrong length', 'PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY=='],
    ['uppercase hex', 'PeterNeumann+C74F20A3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'],
    ['a name with a space', 'Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'],
  ])('rejects %s', (_label, vkey) => {
    expect(() => parseVerifierKey(vkey)).toThrow(NoteFormatError);
  });

  it('parses a key whose base64 part contains a plus', () => {
    let seed = 0;
    let vkey = '';
    while (!vkey.split('+').slice(2).join('+').includes('+'))
      vkey = formatVerifierKey('k', ed25519PrivateKeyFromSeed(Buffer.alloc(32, ++seed)));
    expect(parseVerifierKey(vkey).name).toBe('k');
  });

  it('rejects every truncation of a valid key', () => {
    for (let end = 1; end < PETER_VKEY.length; end++) {
      expect(() => parseVerifierKey(PETER_VKEY.slice(0, end))).toThrow(NoteFormatError);
    }
  });
});

describe('signNote', () => {
  it('produces the Go reference note byte for byte', () => {
    expect(signNote(TEXT, { name: 'PeterNeumann', privateKey: peterKey })).toBe(`${TEXT}\n${PETER_SIG}`);
  });

  it('refuses text that does not end in a newline or carries control characters', () => {
    expect(() => signNote('abc', { name: 'x', privateKey: peterKey })).toThrow(NoteFormatError);
    expect(() => signNote('a\tb\n', { name: 'x', privateKey: peterKey })).toThrow(NoteFormatError);
  });

  it('refuses a key name with a plus or a space', () => {
    expect(() => signNote(TEXT, { name: 'a+b', privateKey: peterKey })).toThrow(NoteFormatError);
    expect(() => signNote(TEXT, { name: 'a b', privateKey: peterKey })).toThrow(NoteFormatError);
  });
});

describe('verifyNote', () => {
  const peter = parseVerifierKey(PETER_VKEY);
  const enoch = parseVerifierKey(ENOCH_VKEY);
  const sut = verifyNote;

  it('accepts a note verified by a known key and ignores unknown signers', () => {
    expect(sut(`${TEXT}\n${PETER_SIG}${ENOCH_SIG}`, [peter])).toEqual({
      ok: true,
      text: TEXT,
      verifiedBy: ['PeterNeumann+c74f20a3'],
    });
    expect(sut(`${TEXT}\n${PETER_SIG}${ENOCH_SIG}`, [peter, enoch])).toMatchObject({
      ok: true,
      verifiedBy: ['PeterNeumann+c74f20a3', 'EnochRoot+af0cfe78'],
    });
  });

  it('rejects a note with no signature from a known key', () => {
    expect(sut(`${TEXT}\n${ENOCH_SIG}`, [peter])).toMatchObject({ ok: false, reason: 'no-known-signature' });
    expect(sut(`${TEXT}\n${PETER_SIG}`, [])).toMatchObject({ ok: false, reason: 'no-known-signature' });
  });

  it('rejects the whole note when a known signature fails, even next to a good one', () => {
    const bad = `${PETER_SIG.slice(0, 60)}ABCD${PETER_SIG.slice(60)}`;
    expect(sut(`${TEXT}\n${bad}`, [peter])).toMatchObject({ ok: false, reason: 'bad-signature' });
    expect(sut(`${TEXT}\n${PETER_SIG}${bad}`, [peter])).toMatchObject({ ok: false, reason: 'bad-signature' });
  });

  it('rejects a changed text', () => {
    expect(sut(`${TEXT.replace('answer', 'Answer')}\n${PETER_SIG}`, [peter])).toMatchObject({
      ok: false,
      reason: 'bad-signature',
    });
  });

  it('rejects every single flipped byte of the text', () => {
    const note = Buffer.from(`${TEXT}\n${PETER_SIG}`, 'utf8');
    const textBytes = Buffer.byteLength(TEXT, 'utf8');
    for (let i = 0; i < textBytes; i++) {
      const flipped = Buffer.from(note);
      flipped[i] = flipped[i]! ^ 0x01;
      expect(sut(flipped, [peter]).ok).toBe(false);
    }
  });

  it.each([
    ['text without signatures', TEXT],
    ['a blank line without signatures', `${TEXT}\n`],
    ['a signature line without its newline', `${TEXT}\n${PETER_SIG.slice(0, -1)}`],
    ['a control character', `\u0001${TEXT}\n${PETER_SIG}`],
    [
      'a name with a space',
      `${TEXT}\n— Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`,
    ],
    ['a line after the signatures', `${TEXT}\n${PETER_SIG}Unexpected line.\n`],
    ['more than 100 signatures', `${TEXT}\n${PETER_SIG.repeat(101)}`],
    ['a signature that is not base64', `${TEXT}\n— PeterNeumann not*base64\n`],
  ])('calls %s malformed', (_label, note) => {
    expect(sut(note, [peter])).toMatchObject({ ok: false, reason: 'malformed' });
  });

  it('calls invalid UTF-8 malformed', () => {
    const bytes = Buffer.concat([Buffer.from([0xff]), Buffer.from(`${TEXT}\n${PETER_SIG}`)]);
    expect(sut(bytes, [peter])).toMatchObject({ ok: false, reason: 'malformed' });
  });

  it('splits at the last blank line, so the text may contain blank lines', () => {
    const text = 'a\n\nb\n';
    const note = signNote(text, { name: 'PeterNeumann', privateKey: peterKey });
    expect(parseNote(note).text).toBe(text);
    expect(sut(note, [peter])).toMatchObject({ ok: true, text });
  });
});

describe('checkpoints', () => {
  it('formats origin, decimal size and base64 hash, one per line', () => {
    const hash = Buffer.alloc(32, 0xab);
    expect(formatCheckpoint({ origin: 'example.com/log', size: 20852163, hash })).toBe(
      `example.com/log\n20852163\n${hash.toString('base64')}\n`,
    );
  });

  it('parses what it formats, keeping extension lines', () => {
    const hash = Buffer.alloc(32, 7);
    expect(parseCheckpoint(`o\n0\n${hash.toString('base64')}\next one\n`)).toEqual({
      origin: 'o',
      size: 0,
      hash,
      extensions: ['ext one'],
    });
  });

  it.each([
    ['a leading zero', 'o\n012\nAAAA\n'],
    ['a negative size', 'o\n-1\nAAAA\n'],
    ['a missing hash', 'o\n12\n'],
    ['an empty origin', '\n12\nAAAA\n'],
    ['a hash that is not base64', 'o\n12\nA*AA\n'],
    ['an empty extension line', 'o\n12\nAAAA\n\nx\n'],
  ])('rejects %s', (_label, text) => {
    expect(() => parseCheckpoint(text)).toThrow(NoteFormatError);
  });
});

describe('chain checkpoints', () => {
  const { privateKey } = generateKeyPairSync('ed25519');
  const vkey = formatVerifierKey(CHECKPOINT_KEY_NAME, privateKey);
  const chain = {
    chainId: 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X',
    size: 42,
    hash: '28a03bb8e2932f87c4639cbcd76ed9ff3de51f5951aa18c24b360a53308bba19',
  };

  it('writes the chain head, hex-decoded, as the base64 hash', () => {
    expect(chainCheckpointText(chain)).toBe(
      `audit-trail/chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X\n42\n${Buffer.from(chain.hash, 'hex').toString('base64')}\n`,
    );
  });

  it('round-trips through signing and verification', () => {
    const note = signChainCheckpoint(chain, privateKey);
    expect(verifyChainCheckpoint(note, [parseVerifierKey(vkey)])).toEqual({
      ok: true,
      checkpoint: chain,
      verifiedBy: [vkey.split('+').slice(0, 2).join('+')],
    });
  });

  it('signs deterministically', () => {
    expect(signChainCheckpoint(chain, privateKey)).toBe(signChainCheckpoint(chain, privateKey));
  });

  it('rejects a signed note whose origin is not one of our chains', () => {
    const note = signNote(formatCheckpoint({ origin: 'example.com/log', size: 1, hash: Buffer.alloc(32) }), {
      name: CHECKPOINT_KEY_NAME,
      privateKey,
    });
    expect(verifyChainCheckpoint(note, [parseVerifierKey(vkey)])).toMatchObject({ ok: false, reason: 'malformed' });
  });

  it('refuses a head that is not 64 hex characters', () => {
    expect(() => chainCheckpointText({ ...chain, hash: 'ABC' })).toThrow(NoteFormatError);
  });
});

describe('decodeBase64', () => {
  it('is strict: padding required, no whitespace or URL alphabet', () => {
    expect(decodeBase64('AAAA')).toEqual(Buffer.alloc(3));
    expect(decodeBase64('AA')).toBeNull();
    expect(decodeBase64('AA A')).toBeNull();
    expect(decodeBase64('AA-_')).toBeNull();
  });
});

describe('a note with a stray line', () => {
  it('names the line, as an editor counts it, and what it holds', () => {
    const note = 'audit-trail/chn_x\n3\nabc=\n\n— name AAAAAAAAAA==\nstray text\n';
    expect(() => parseNote(note)).toThrow(NoteFormatError);
    expect(() => parseNote(note)).toThrow('line 6 ("stray text"): a signature line starts with an em dash and a space');
  });
});
