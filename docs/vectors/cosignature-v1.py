#!/usr/bin/env python3
"""An independent cosignature/v1 (c2sp.org/tlog-cosignature, Ed25519) computation, to cross-check
libs/hashing/src/cosignature.ts. It shares no code with the service: Python's standard library and
the `cryptography` package (pip install cryptography) only.

    python3 docs/vectors/cosignature-v1.py

prints the witness's verifier key, its key id and the cosignature line over the checkpoint below;
cosignature.spec.ts expects exactly these values (Ed25519 signatures are deterministic).
"""
import base64
import hashlib
import struct

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

# The seed of golang.org/x/mod/sumdb/note's test key "PeterNeumann" (note_test.go), reused under
# another name: a published seed, so anyone can rederive the key.
SEED = base64.b64decode("AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz")[1:]
NAME = "witness.example/w1"
TIME = 1679315147  # the timestamp of c2sp.org/tlog-cosignature's example message
# The checkpoint of c2sp.org/tlog-cosignature's example, plus one extension line (it is signed too).
TEXT = "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\nextension\n"
COSIGNATURE_V1 = 0x04

key = Ed25519PrivateKey.from_private_bytes(SEED)
public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
key_id = hashlib.sha256(NAME.encode() + b"\n" + bytes([COSIGNATURE_V1]) + public).digest()[:4]
vkey = f"{NAME}+{key_id.hex()}+{base64.b64encode(bytes([COSIGNATURE_V1]) + public).decode()}"
message = f"cosignature/v1\ntime {TIME}\n{TEXT}".encode()
signature = key.sign(message)
line = f"\u2014 {NAME} {base64.b64encode(key_id + struct.pack('>Q', TIME) + signature).decode()}"

print(f"vkey   {vkey}")
print(f"key id {key_id.hex()}")
print(f"line   {line}")
