import { countCosignatures, parseCosignatureKey } from './witnessed';
import { NoteError } from './signed-note';

/*
 * The console's cosignature check (Web Crypto, sharing no code with the service) against the
 * cosignature/v1 vector that libs/hashing's cosignature.spec.ts and docs/vectors/cosignature-v1.py
 * agree on: the Go sumdb/note seed "PeterNeumann" as witness.example/w1 cosigning the
 * c2sp.org/tlog-cosignature example checkpoint plus an extension line.
 */
const VKEY = 'witness.example/w1+cc9a7044+BBpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const TEXT = 'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\nextension\n';
const LINE =
  '— witness.example/w1 zJpwRAAAAABkGFDLDcW4hv+WBnab4U85Tb7ULWnMCkgIds2jS1rgU8r3SBaiIriT5RZV4cJkCq1LhAMSR5Kq7RUG3iOeW42QOs8eDw==';
const LOG_SIGNATURE =
  '— example.com/behind-the-sofa AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

describe('cosignature/v1 in the browser (docs/contract.md §18)', () => {
  it('reads the vector key, and refuses a plain note key or a wrong id', async () => {
    expect((await parseCosignatureKey(VKEY)).name).toBe('witness.example/w1');
    await expect(parseCosignatureKey(VKEY.replace('+BB', '+AR'))).rejects.toThrow(NoteError);
    await expect(parseCosignatureKey(VKEY.replace('cc9a7044', 'cc9a7045'))).rejects.toThrow(NoteError);
  });

  it('counts the vector cosignature, once, and not over another text or from another key', async () => {
    const key = await parseCosignatureKey(VKEY);
    const note = `${TEXT}\n${LOG_SIGNATURE}\n${LINE}\n${LINE}\n`;
    expect(await countCosignatures(note, [key])).toBe(1);
    expect(await countCosignatures(note.replace('20852163', '20852164'), [key])).toBe(0);
    const other = { ...key, keyId: new Uint8Array([1, 2, 3, 4]) };
    expect(await countCosignatures(note, [other])).toBe(0);
    expect(await countCosignatures(`${TEXT}\n${LOG_SIGNATURE}\n`, [key])).toBe(0);
  });
});
