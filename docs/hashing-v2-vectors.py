#!/usr/bin/env python3
"""Recomputes the hash-version-2 test vectors of docs/hashing.md ("Version 2") and
libs/hashing/src/event-hash-v2.spec.ts, independently of the service's code.

    python3 docs/hashing-v2-vectors.py        # prints every vector; exits 1 if one disagrees

Only the standard library. json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
is RFC 8785 (JCS) for these inputs: strings and integers only, no float, and no object keys that
differ at a character above U+FFFF (see docs/hashing.md §6, "Caveat").
"""
import hashlib
import json
import sys

ZEROS = "0" * 64


def jcs(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_hex(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def commitment(salt, value):
    """C(x) = hex(SHA-256(UTF-8(JCS([salt, x]))))"""
    return sha256_hex(jcs([salt, value]))


def field(value, salt, kept_commitment, name):
    """A field's commitment: from (value, salt) while kept, the stored commitment once erased."""
    if kept_commitment is not None:
        assert value is None and salt is None, name + ": erased, yet a value or salt remains"
        return kept_commitment
    assert salt is not None, name + ": a value without a salt"
    return commitment(salt, value)


def payload_v2(event, hashing):
    """What an auditor does with an exported event and its `hashing` object."""
    salts, commits = hashing["salts"], hashing["commitments"]
    resource = None
    if event["resource"] is None and "resource" not in commits:
        assert "resource" not in salts, "resource: a salt without a value"
    else:
        resource = field(event["resource"], salts.get("resource"), commits.get("resource"), "resource")
    context = None
    if event["context"] is None:
        assert "context" not in salts and "context" not in commits, "context: null, yet salted"
    else:
        erased = commits.get("context", {})
        context = {m: field(None, None, c, "context." + m) for m, c in erased.items()}
        for m, value in event["context"].items():
            assert m not in erased, "context." + m + ": both a value and a commitment"
            context[m] = field(value, salts.get("context", {}).get(m), None, "context." + m)
    return {
        "v": 2,
        "id": event["id"],
        "chainId": event["chainId"],
        "position": event["position"],
        "action": event["action"],
        "timestamp": event["timestamp"],
        "previousHash": event["previousHash"],
        "actor": field(event["actor"], salts.get("actor"), commits.get("actor"), "actor"),
        "resource": resource,
        "context": context,
    }


def hash_v2(event, hashing):
    text = jcs(payload_v2(event, hashing))
    return text, sha256_hex(text)


CHAIN = "chn_01JQ3V2C8N4K7M2P9R6T0V1XCH"

# 1. Genesis: no resource, null context; only the actor is salted.
v1_event = {
    "id": "evt_01JQ3V2D1A2B3C4D5E6F7G8H9J",
    "chainId": CHAIN,
    "position": 1,
    "actor": "user_42",
    "action": "user.login",
    "resource": None,
    "context": None,
    "timestamp": "2027-03-01T09:15:00.000Z",
    "previousHash": ZEROS,
}
v1_hashing = {"version": 2, "salts": {"actor": "000102030405060708090a0b0c0d0e0f"}, "commitments": {}}

# 2. A resource and three context members: a nested object, non-ASCII text, an integer.
v1_text, v1_hash = hash_v2(v1_event, v1_hashing)
v2_event = {
    "id": "evt_01JQ3V2D2K3M4N5P6Q7R8S9T0V",
    "chainId": CHAIN,
    "position": 2,
    "actor": "zoe.muller@example.com",
    "action": "profile.update",
    "resource": "user:zoe",
    "context": {
        "name": "Zoë Müller 😀",
        "address": {"lines": ["Bahnhofstrasse 1", "Büro 3"], "city": "Zürich", "zip": 8001},
        "changes": 3,
    },
    "timestamp": "2027-03-01T09:15:01.250Z",
    "previousHash": v1_hash,
}
v2_hashing = {
    "version": 2,
    "salts": {
        "actor": "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf",
        "resource": "b0b1b2b3b4b5b6b7b8b9babbbcbdbebf",
        "context": {
            "address": "c0c1c2c3c4c5c6c7c8c9cacbcccdcecf",
            "changes": "d0d1d2d3d4d5d6d7d8d9dadbdcdddedf",
            "name": "e0e1e2e3e4e5e6e7e8e9eaebecedeeef",
        },
    },
    "commitments": {},
}
v2_text, v2_hash = hash_v2(v2_event, v2_hashing)

# 3. Vector 2 after erasing `actor` and `context.name`: values and salts gone, commitments kept.
v3_event = dict(v2_event, actor=None, context={k: v for k, v in v2_event["context"].items() if k != "name"})
v3_hashing = {
    "version": 2,
    "salts": {
        "resource": v2_hashing["salts"]["resource"],
        "context": {k: v for k, v in v2_hashing["salts"]["context"].items() if k != "name"},
    },
    "commitments": {
        "actor": commitment(v2_hashing["salts"]["actor"], v2_event["actor"]),
        "context": {"name": commitment(v2_hashing["salts"]["context"]["name"], v2_event["context"]["name"])},
    },
}
v3_text, v3_hash = hash_v2(v3_event, v3_hashing)

# 4. An empty context hashes as {} (not null), a null resource as null.
v4_event = dict(v1_event, id="evt_01JQ3V2D3W4X5Y6Z7A8B9C0D1E", position=3, previousHash=v2_hash, context={},
                timestamp="2027-03-01T09:15:02.000Z")
v4_hashing = {"version": 2, "salts": {"actor": "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", "context": {}}, "commitments": {}}
v4_text, v4_hash = hash_v2(v4_event, v4_hashing)

for ident in (v1_event["id"], v2_event["id"], v4_event["id"], CHAIN):
    assert len(ident) == 30, ident

vectors = {
    "1 genesis, null resource and context": (v1_text, v1_hash),
    "2 resource and three context members": (v2_text, v2_hash),
    "3 vector 2 after erasing actor and context.name": (v3_text, v3_hash),
    "4 empty context": (v4_text, v4_hash),
}
for name, (text, digest) in vectors.items():
    print("#", name)
    print("text  ", text)
    print("bytes ", len(text.encode("utf-8")))
    print("hash  ", digest)
print("# commitments of vector 2")
for m, salt in [("actor", v2_hashing["salts"]["actor"]), ("resource", v2_hashing["salts"]["resource"])]:
    print(m, commitment(salt, v2_event[m]), jcs([salt, v2_event[m]]))
for m, salt in v2_hashing["salts"]["context"].items():
    print("context." + m, commitment(salt, v2_event["context"][m]), jcs([salt, v2_event["context"][m]]))
print("# vector 3's hashing object")
print(jcs(v3_hashing))

if v3_hash != v2_hash or v3_text != v2_text:
    print("MISMATCH: erasing changed the hash", file=sys.stderr)
    sys.exit(1)
