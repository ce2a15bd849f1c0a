import { fromHex, toHex, utf8 } from './bytes';
import { checkInBrowser } from './browser-check';
import { recomputeEventHash } from './event-hash';
import { leafHash, rootFromInclusionProof } from './merkle';
import { NoteError, parseCheckpointText, parseVerifierKey, verifySignedNote } from './signed-note';

/*
 * The console's own verification code (Web Crypto, as in the browser: Node's globalThis.crypto)
 * against published vectors, the same the service's libs/hashing is tested with, so the two
 * implementations, which share no code, agree through them.
 */
const hex = (text: string): Uint8Array => fromHex(text)!;

describe('recomputeEventHash of version-2 events (contract §17: docs/hashing.md, "Version 2")', () => {
  const address = { lines: ['Bahnhofstrasse 1', 'B\u00fcro 3'], city: 'Z\u00fcrich', zip: 8001 };
  const vector2 = {
    id: 'evt_01JQ3V2D2K3M4N5P6Q7R8S9T0V',
    chain: { id: 'chn_01JQ3V2C8N4K7M2P9R6T0V1XCH', position: 2 },
    actor: 'zoe.muller@example.com' as string | null,
    action: 'profile.update',
    resource: 'user:zoe',
    context: { name: 'Zo\u00eb M\u00fcller \ud83d\ude00', address, changes: 3 } as Record<string, unknown>,
    timestamp: '2027-03-01T09:15:01.250Z',
    previousHash: '884a6a8f2ce8b9b1a52d690316cd545707785be14290cc83f3686e144427b1c1',
    hashing: {
      version: 2 as const,
      salts: {
        actor: 'a0a1a2a3a4a5a6a7a8a9aaabacadaeaf',
        resource: 'b0b1b2b3b4b5b6b7b8b9babbbcbdbebf',
        context: {
          address: 'c0c1c2c3c4c5c6c7c8c9cacbcccdcecf',
          changes: 'd0d1d2d3d4d5d6d7d8d9dadbdcdddedf',
          name: 'e0e1e2e3e4e5e6e7e8e9eaebecedeeef',
        },
      },
      commitments: {} as Record<string, never>,
    },
  };
  const HASH = 'defdce3881df9882025d846c12f90d3f8d2644617ff95bdd59c39f6d1d2639e1';

  it('hashes vector 2 from values and salts', async () => {
    expect(await recomputeEventHash(vector2)).toBe(HASH);
    expect(await recomputeEventHash({ ...vector2, actor: 'mallory' })).not.toBe(HASH);
  });

  it('hashes vector 3 (vector 2 with actor and context.name erased) from the kept commitments to the same hash', async () => {
    const vector3 = {
      ...vector2,
      actor: null,
      context: { address, changes: 3 },
      hashing: {
        version: 2 as const,
        salts: {
          resource: vector2.hashing.salts.resource,
          context: { address: 'c0c1c2c3c4c5c6c7c8c9cacbcccdcecf', changes: 'd0d1d2d3d4d5d6d7d8d9dadbdcdddedf' },
        },
        commitments: {
          actor: 'cbf6a0a2b0e817a7fa682891135507c7ab08cfa23b1d44956af8811a27cce902',
          context: { name: '21c06700a45ffb1ef481764ea762f337ab2b37103e8a946d850bc74dddaa9ec3' },
        },
      },
    };
    expect(await recomputeEventHash(vector3)).toBe(HASH);
  });
});

describe('recomputeEventHash (RFC 8785 + SHA-256, contract §3)', () => {
  const ZEROS = '0'.repeat(64);
  it('hashes the genesis vector', async () => {
    const event = {
      id: 'evt_01JDQ8Z5X3N4K7M2P9R6T0V1WA',
      chain: { id: 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X', position: 1 },
      actor: 'user_42',
      action: 'user.login',
      resource: null,
      context: null,
      timestamp: '2026-11-22T07:24:53.449Z',
      previousHash: ZEROS,
    };
    expect(await recomputeEventHash(event)).toBe('28a03bb8e2932f87c4639cbcd76ed9ff3de51f5951aa18c24b360a53308bba19');
  });

  it('hashes the second vector: nested context, non-ASCII, numbers, key order by UTF-16 units', async () => {
    const event = {
      id: 'evt_01JDQ8Z6A1B2C3D4E5F6G7H8J9',
      chain: { id: 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X', position: 2 },
      actor: 'alice@example.com',
      action: 'document.update',
      resource: 'doc:123',
      context: {
        tags: ['\u00fcn\u00ef', '\ud83d\ude00', 1, null, true],
        note: 'caf\u00e9',
        ratio: -0.25,
        nested: { z: false, a: { y: [], b: {} } },
        items: [
          { sku: 'A-1', qty: 2 },
          { sku: 'B-2', qty: 1 },
        ],
        emoji: '\ud83d\ude00',
        currency: '\u20ac',
        count: 3,
        amount: 12.5,
      },
      timestamp: '2026-11-22T07:24:54.001Z',
      previousHash: '28a03bb8e2932f87c4639cbcd76ed9ff3de51f5951aa18c24b360a53308bba19',
    };
    expect(await recomputeEventHash(event)).toBe('4560fb8e4d6233db079a405d19b862c7a7051a14365968e82ceb6d52f5a7215b');
    // Member order of the input never matters; a changed field does.
    expect(await recomputeEventHash({ ...event, actor: 'mallory' })).not.toBe(
      '4560fb8e4d6233db079a405d19b862c7a7051a14365968e82ceb6d52f5a7215b',
    );
  });
});

describe('rootFromInclusionProof (RFC 9162 §2.1.3.2)', () => {
  // transparency-dev/merkle's published vectors (as in libs/hashing/src/merkle.spec.ts).
  const LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'];
  const ROOTS = [
    '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
    'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
    'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
    'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
    '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
    'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
    '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
  ];
  const INCLUSION: [number, number, string[]][] = [
    [0, 1, []],
    [
      0,
      8,
      [
        '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
        '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
        '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
      ],
    ],
    [
      5,
      8,
      [
        'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
        'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
        'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
      ],
    ],
    [2, 3, ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125']],
    [
      1,
      5,
      [
        '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
        '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
        'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      ],
    ],
  ];

  it.each(INCLUSION)('leaf %i of %i leads to the published root', async (index, size, proof) => {
    const root = await rootFromInclusionProof(index, size, await leafHash(hex(LEAVES[index]!)), proof.map(hex));
    expect(root && toHex(root)).toBe(ROOTS[size - 1]);
  });

  it('gives another root for another leaf, and none for a proof of the wrong length or index', async () => {
    const [index, size, proof] = INCLUSION[2]!;
    const other = await rootFromInclusionProof(index, size, await leafHash(hex('ff')), proof.map(hex));
    expect(other && toHex(other)).not.toBe(ROOTS[size - 1]);
    expect(
      await rootFromInclusionProof(index, size, await leafHash(hex(LEAVES[index]!)), proof.slice(1).map(hex)),
    ).toBeNull();
    expect(
      await rootFromInclusionProof(index, size, await leafHash(hex(LEAVES[index]!)), [...proof, proof[0]!].map(hex)),
    ).toBeNull();
    expect(await rootFromInclusionProof(8, 8, await leafHash(hex('')), [])).toBeNull();
  });
});

describe('signed notes (c2sp.org/signed-note, Go reference vectors)', () => {
  const PETER_VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
  const ENOCH_VKEY = 'EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop';
  const TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
  const PETER_SIG =
    '— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n';
  const ENOCH_SIG =
    '— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n';

  it('verifies the reference note with the reference key, ignoring another signer', async () => {
    const peter = await parseVerifierKey(PETER_VKEY);
    expect(toHex(peter.keyId)).toBe('c74f20a3');
    await expect(verifySignedNote(`${TEXT}\n${ENOCH_SIG}${PETER_SIG}`, peter)).resolves.toBe(TEXT);
    await expect(verifySignedNote(`${TEXT}\n${PETER_SIG}`, await parseVerifierKey(ENOCH_VKEY))).rejects.toThrow(
      'no signature by the verifier key',
    );
  });

  it('refuses a changed text, a changed signature and a key whose id does not match', async () => {
    const peter = await parseVerifierKey(PETER_VKEY);
    await expect(verifySignedNote(`${TEXT.replace('answer', 'Answer')}\n${PETER_SIG}`, peter)).rejects.toThrow(
      'does not verify',
    );
    const bad = `${PETER_SIG.slice(0, 60)}ABCD${PETER_SIG.slice(60)}`;
    await expect(verifySignedNote(`${TEXT}\n${bad}`, peter)).rejects.toThrow(NoteError);
    await expect(parseVerifierKey(PETER_VKEY.replace('c74f20a3', 'c74f20a4'))).rejects.toThrow('id does not match');
  });

  it('reads a checkpoint text', () => {
    const root = new Uint8Array(32).fill(7);
    const text = `audit-trail/chn_x\n5\n${btoa(String.fromCharCode(...root))}\n`;
    expect(parseCheckpointText(text)).toEqual({ origin: 'audit-trail/chn_x', size: 5, root });
    expect(() => parseCheckpointText('audit-trail/chn_x\n05\nAAAA\n')).toThrow(NoteError);
    expect(utf8('é')).toEqual(new Uint8Array([0xc3, 0xa9]));
  });
});

describe('checkInBrowser: Verified only when the hash, the proof and the signature all hold', () => {
  // A chain of two events, its tree and a checkpoint signed here with a fresh Ed25519 key.
  const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
  const event = {
    id: 'evt_01JDQ8Z5X3N4K7M2P9R6T0V1WA',
    chain: { id: 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X', position: 1 },
    actor: 'user_42',
    action: 'user.login',
    resource: null,
    context: null,
    timestamp: '2026-11-22T07:24:53.449Z',
    previousHash: '0'.repeat(64),
    hash: '28a03bb8e2932f87c4639cbcd76ed9ff3de51f5951aa18c24b360a53308bba19',
  };
  const sibling = '4560fb8e4d6233db079a405d19b862c7a7051a14365968e82ceb6d52f5a7215b';

  async function setup(origin = `audit-trail/${event.chain.id}`) {
    const keys = await crypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify']);
    const publicKey = new Uint8Array(await crypto.subtle.exportKey('raw', keys.publicKey));
    const keyId = (await sha256Of(utf8('audit-trail'), new Uint8Array([0x0a, 0x01]), publicKey)).slice(0, 4);
    const verifierKey = `audit-trail+${toHex(keyId)}+${b64(new Uint8Array([0x01, ...publicKey]))}`;
    const leaf0 = await leafHash(hex(event.hash));
    const leaf1 = await leafHash(hex(sibling));
    const root = await sha256Of(new Uint8Array([0x01]), leaf0, leaf1);
    const text = `${origin}\n2\n${b64(root)}\n`;
    const signature = new Uint8Array(
      await crypto.subtle.sign({ name: 'Ed25519' }, keys.privateKey, new Uint8Array(utf8(text))),
    );
    const checkpoint = `${text}\n— audit-trail ${b64(new Uint8Array([...keyId, ...signature]))}\n`;
    const proof = {
      chainId: event.chain.id,
      position: 1,
      leafIndex: 0,
      size: 2,
      eventHash: event.hash,
      rootHash: toHex(root),
      proof: [toHex(leaf1)],
    };
    return { verifierKey, checkpoint, proof, text };
  }
  const sha256Of = async (...parts: Uint8Array[]) => {
    const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      all.set(p, at);
      at += p.length;
    }
    return new Uint8Array(await crypto.subtle.digest('SHA-256', all));
  };
  const failed = (r: Awaited<ReturnType<typeof checkInBrowser>>) => r.checks.filter((c) => !c.ok).map((c) => c.name);

  it('verifies an honest event', async () => {
    const { verifierKey, checkpoint, proof } = await setup();
    const result = await checkInBrowser({ event, checkpoint, verifierKey, proofAt: () => Promise.resolve(proof) });
    expect(result).toMatchObject({ verified: true });
    expect(failed(result)).toEqual([]);
  });

  it('names the hash when a field was altered', async () => {
    const { verifierKey, checkpoint, proof } = await setup();
    const result = await checkInBrowser({
      event: { ...event, actor: 'mallory' },
      checkpoint,
      verifierKey,
      proofAt: () => Promise.resolve(proof),
    });
    expect(result.verified).toBe(false);
    expect(failed(result)).toEqual(['hash']);
  });

  it('names the proof when it does not lead to the signed root', async () => {
    const { verifierKey, checkpoint, proof } = await setup();
    const wrong = { ...proof, proof: ['ab'.repeat(32)] };
    const result = await checkInBrowser({ event, checkpoint, verifierKey, proofAt: () => Promise.resolve(wrong) });
    expect(failed(result)).toEqual(['proof']);
  });

  it('names the signature when the checkpoint was changed or signed by another key, or is of another chain', async () => {
    const { verifierKey, checkpoint, proof, text } = await setup();
    const proofAt = () => Promise.resolve(proof);
    const altered = checkpoint.replace(text, text.replace('\n2\n', '\n3\n'));
    expect(failed(await checkInBrowser({ event, checkpoint: altered, verifierKey, proofAt }))).toEqual([
      'proof',
      'signature',
    ]);
    const other = await setup();
    expect(failed(await checkInBrowser({ event, checkpoint, verifierKey: other.verifierKey, proofAt }))).toEqual([
      'proof',
      'signature',
    ]);
    const elsewhere = await setup('audit-trail/chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1Y');
    const result = await checkInBrowser({
      event,
      checkpoint: elsewhere.checkpoint,
      verifierKey: elsewhere.verifierKey,
      proofAt,
    });
    expect(result.checks.find((c) => c.name === 'signature')?.message).toContain('not this chain');
  });
});
