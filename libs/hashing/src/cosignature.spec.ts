import { generateKeyPairSync } from 'node:crypto';
import {
  cosign,
  cosignatureKeyId,
  cosignatureMessage,
  formatCosignatureVerifierKey,
  parseCosignatureLine,
  parseCosignatureVerifierKey,
  verifiedCosignatures,
  verifyCosignature,
} from './cosignature';
import {
  ed25519PrivateKeyFromSeed,
  ed25519PublicKeyBytes,
  formatVerifierKey,
  NoteFormatError,
  parseVerifierKey,
  signNote,
  verifyNote,
} from './signed-note';

/*
 * Cross-checked with docs/vectors/cosignature-v1.py (Python's `cryptography`, no code shared):
 * the Go sumdb/note test seed "PeterNeumann" under the name witness.example/w1, cosigning the
 * c2sp.org/tlog-cosignature example checkpoint (plus an extension line) at the example's time.
 */
const SEED = Buffer.from('AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz', 'base64').subarray(1);
const NAME = 'witness.example/w1';
const TIME = 1679315147;
const TEXT = 'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\nextension\n';
const VKEY = 'witness.example/w1+cc9a7044+BBpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const LINE =
  '— witness.example/w1 zJpwRAAAAABkGFDLDcW4hv+WBnab4U85Tb7ULWnMCkgIds2jS1rgU8r3SBaiIriT5RZV4cJkCq1LhAMSR5Kq7RUG3iOeW42QOs8eDw==\n';
const witnessKey = ed25519PrivateKeyFromSeed(SEED);

describe('cosignature/v1 keys', () => {
  it('formats the cross-checked verifier key (type 0x04)', () => {
    expect(formatCosignatureVerifierKey(NAME, witnessKey)).toBe(VKEY);
  });

  it('computes the key id as SHA-256(name || 0x0A || 0x04 || key)[:4]', () => {
    expect(cosignatureKeyId(NAME, ed25519PublicKeyBytes(witnessKey)).toString('hex')).toBe('cc9a7044');
  });

  it("accepts a published witness's key (transparency-dev/formats note_cosigv1_test.go)", () => {
    const sut = parseCosignatureVerifierKey('remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2');
    expect(sut.name).toBe('remora.n621.de');
    expect(sut.keyId.toString('hex')).toBe('da77ade7');
  });

  it('refuses a plain note key (type 0x01) and a wrong key id', () => {
    expect(() => parseCosignatureVerifierKey(formatVerifierKey(NAME, witnessKey))).toThrow(NoteFormatError);
    expect(() => parseCosignatureVerifierKey(VKEY.replace('cc9a7044', 'cc9a7045'))).toThrow(NoteFormatError);
    expect(() => parseVerifierKey(VKEY)).toThrow(NoteFormatError);
  });
});

describe('cosign', () => {
  it('signs "cosignature/v1\\ntime <t>\\n" and the whole text, byte-identical to the Python cross-check', () => {
    expect(cosign(TEXT, witnessKey, NAME, TIME)).toBe(LINE);
  });

  it('builds the message of the spec', () => {
    expect(cosignatureMessage(TEXT, TIME).toString()).toBe(`cosignature/v1\ntime 1679315147\n${TEXT}`);
  });

  it.each([
    ['a text without its final newline', TEXT.slice(0, -1), TIME],
    ['a whole signed note', `${TEXT}\n— log AAAA\n`, TIME],
    ['a negative time', TEXT, -1],
    ['a fractional time', TEXT, 1.5],
  ])('refuses %s', (_what, text, time) => {
    expect(() => cosign(text, witnessKey, NAME, time)).toThrow(NoteFormatError);
  });

  it('refuses an invalid name', () => {
    expect(() => cosign(TEXT, witnessKey, 'a b', TIME)).toThrow(NoteFormatError);
  });
});

describe('parseCosignatureLine', () => {
  it('reads the key id and the big-endian timestamp of the spec example', () => {
    const sut = parseCosignatureLine(
      '— witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==',
    );
    expect(sut.name).toBe('witness.example.com/w1');
    expect(sut.keyId.toString('hex')).toBe('8d66cf3f');
    expect(sut.time).toBe(1679315147);
    expect(sut.signature).toHaveLength(64);
  });

  it('reads the timestamp of transparency-dev/formats TestCoSigV1Timestamp', () => {
    const line =
      '— w ZGhGuQAAAABm/qTPeyKXD+R2rzyQsxPiP8mXum7qq/iF0u4vanlqJyocWODBt97w9uL+8qT7S5gxEHWWOworDcFiEBYJXORmnFBOBA==';
    expect(parseCosignatureLine(line).time).toBe(1727964367);
  });

  it('refuses a plain note signature (no timestamp)', () => {
    const plain = signNote(TEXT, { name: NAME, privateKey: witnessKey }).split('\n\n')[1]!;
    expect(() => parseCosignatureLine(plain)).toThrow(NoteFormatError);
  });
});

describe('verifyCosignature', () => {
  it('verifies the cross-checked line with the vkey text or a parsed key', () => {
    expect(verifyCosignature(TEXT, LINE, VKEY)).toEqual({ ok: true, name: NAME, time: TIME });
    expect(verifyCosignature(TEXT, LINE, parseCosignatureVerifierKey(VKEY)).ok).toBe(true);
  });

  it.each([
    ['another size', TEXT.replace('20852163', '20852164')],
    ['another extension line', TEXT.replace('extension', 'extensioN')],
    ['no extension line', TEXT.replace('extension\n', '')],
  ])('refuses the line over a text with %s', (_what, text) => {
    expect(verifyCosignature(text, LINE, VKEY)).toMatchObject({ ok: false, reason: 'bad-signature' });
  });

  it('refuses a line whose timestamp was changed', () => {
    const blob = Buffer.from(LINE.slice(NAME.length + 3, -1), 'base64');
    blob.writeBigUInt64BE(BigInt(TIME + 1), 4);
    const forged = `— ${NAME} ${blob.toString('base64')}\n`;
    expect(verifyCosignature(TEXT, forged, VKEY)).toMatchObject({ ok: false, reason: 'bad-signature' });
  });

  it('tells a line from another key apart', () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const line = cosign(TEXT, privateKey, NAME, TIME);
    expect(verifyCosignature(TEXT, line, VKEY)).toMatchObject({ ok: false, reason: 'other-key' });
  });

  it('reports a malformed line or key', () => {
    expect(verifyCosignature(TEXT, '— w AAAA', VKEY)).toMatchObject({ ok: false, reason: 'malformed' });
    expect(verifyCosignature(TEXT, LINE, 'nope')).toMatchObject({ ok: false, reason: 'malformed' });
  });
});

describe('verifiedCosignatures', () => {
  const logKey = generateKeyPairSync('ed25519').privateKey;
  const otherWitness = generateKeyPairSync('ed25519').privateKey;

  it("keeps the listed witnesses' valid lines and ignores the log's signature and others", () => {
    const logNote = signNote(TEXT, { name: 'example.com/behind-the-sofa', privateKey: logKey });
    const note = logNote + LINE + cosign(TEXT, otherWitness, 'other', TIME) + cosign(TEXT, witnessKey, NAME, 1);
    const sut = verifiedCosignatures(note, [parseCosignatureVerifierKey(VKEY)]);
    expect(sut).toEqual([{ witness: 'witness.example/w1+cc9a7044', time: TIME, line: LINE }]);
  });

  it("leaves the log's own signature verifiable: cosignature lines are other keys to verifyNote", () => {
    const logNote = signNote(TEXT, { name: 'example.com/behind-the-sofa', privateKey: logKey });
    const logVkey = parseVerifierKey(formatVerifierKey('example.com/behind-the-sofa', logKey));
    expect(verifyNote(logNote + LINE, [logVkey]).ok).toBe(true);
  });
});
