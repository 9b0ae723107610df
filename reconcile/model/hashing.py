"""The combined config hash: what "the configuration of this workload changed" means, precisely.

Pure and deterministic: the same referenced content gives the same value on every machine, in every
process, whatever the order of references or of keys. The encoding is specified in docs/hash.md so
anyone can recompute a stored value. Two levels, so a pass can reuse what it already knows:

- a *source digest* (xxh3-128) covers the selected entries of one ConfigMap or Secret;
- the *combined hash* (xxh3-128) covers the sorted (kind, name, sealed source digest) records.

In keyed mode every source digest and the combined value are sealed with HMAC-SHA256 under a key
the job keeps in a Secret, so a value stored in a Deployment reveals nothing about a low-entropy
Secret to someone who can read Deployments.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, NamedTuple

import xxhash

from reconcile.errors import RehashError

HASH_VERSION = "v1"
SOURCE_DOMAIN = b"kube-rehash/source/v1\x00"
COMBINED_DOMAIN = b"kube-rehash/combined/v1\x00"
FINGERPRINT_DOMAIN = b"kube-rehash/key-fingerprint/v1\x00"
ABSENT = "-"
WHOLE = "*"


class ContentError(RehashError):
    """A source's content cannot be decoded (e.g. invalid base64 in binaryData)."""


def encode_field(value: bytes) -> bytes:
    """Length-prefixed field: 8-byte big-endian length, then the bytes. Unambiguous by construction."""
    return len(value).to_bytes(8, "big") + value


def encode_text(value: str) -> bytes:
    # surrogatepass: JSON may carry lone surrogates; they must hash, not crash.
    return encode_field(value.encode("utf-8", "surrogatepass"))


def _decode_b64(value: Any, where: str) -> bytes:
    if not isinstance(value, str):
        raise ContentError(f"{where} is not a base64 string")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ContentError(f"{where} is not valid base64") from None


def extract_entries(kind: str, obj: Mapping[str, Any]) -> dict[str, bytes]:
    """The content a pod can see: `data` (decoded for Secrets) and `binaryData`, never metadata.

    A key's bytes are what lands in the env var or file, so `data` and `binaryData` are not told apart.
    """
    entries: dict[str, bytes] = {}
    data = obj.get("data")
    if isinstance(data, Mapping):
        for key, value in data.items():
            if kind == "secret":
                entries[str(key)] = _decode_b64(value, f"data[{key!r}]")
            elif isinstance(value, str):
                entries[str(key)] = value.encode("utf-8", "surrogatepass")
            else:
                raise ContentError(f"data[{key!r}] is not a string")
    binary = obj.get("binaryData")
    if isinstance(binary, Mapping):
        for key, value in binary.items():
            entries[str(key)] = _decode_b64(value, f"binaryData[{key!r}]")
    return entries


def digest_entries(entries: Mapping[str, bytes], keys: frozenset[str] | None) -> bytes:
    """xxh3-128 of the selected entries (all when `keys` is None), sorted by key bytes."""
    selected = sorted(
        (key.encode("utf-8", "surrogatepass"), value)
        for key, value in entries.items()
        if keys is None or key in keys
    )
    h = xxhash.xxh3_128()
    h.update(SOURCE_DOMAIN)
    h.update(len(selected).to_bytes(8, "big"))
    for key, value in selected:
        h.update(encode_field(key))
        h.update(encode_field(value))
    return h.digest()


def seal(digest: bytes, key: bytes | None) -> str:
    """The token stored for one digest: its hex, or in keyed mode HMAC-SHA256(key, digest) truncated."""
    if key is None:
        return digest.hex()
    return hmac.new(key, digest, hashlib.sha256).digest()[:16].hex()


def source_token(
    kind: str, obj: Mapping[str, Any] | None, keys: frozenset[str] | None, key: bytes | None
) -> str:
    """Sealed digest of one source's selected content; `ABSENT` for a missing (optional) source."""
    if obj is None:
        return ABSENT
    return seal(digest_entries(extract_entries(kind, obj), keys), key)


class SourceToken(NamedTuple):
    """One source's part of the combined hash. A named tuple: a pass combines the records of every
    workload it confirms (10,000 in a 10x steady pass), and tuples are deduplicated and sorted by C code,
    in this field order."""

    kind: str
    name: str
    token: str


def combine(tokens: Iterable[SourceToken], key: bytes | None) -> str:
    """The stored value: `v1:<hex>` (or `v1k:<hex>` keyed) over the records sorted by (kind, name).
    The length-prefixed fields are hashed as one string of bytes: xxh3's streaming digest is the digest
    of the concatenation, so this is the value docs/hash.md specifies field by field."""
    records = sorted(set(tokens))
    fields = [COMBINED_DOMAIN, len(records).to_bytes(8, "big")]
    for kind, name, token in records:
        fields += (encode_text(kind), encode_text(name), encode_text(token))
    digest = xxhash.xxh3_128(b"".join(fields))
    if key is None:
        return f"{HASH_VERSION}:{digest.hexdigest()}"
    return f"{HASH_VERSION}k:{seal(digest.digest(), key)}"


@lru_cache(maxsize=16)
def key_fingerprint(key: bytes | None) -> str:
    """A short public tag of the hashing key, so a pass knows stored tokens were sealed with another key."""
    if key is None:
        return ""
    return hmac.new(key, FINGERPRINT_DOMAIN, hashlib.sha256).hexdigest()[:12]


def selection_tag(keys: frozenset[str] | None) -> str:
    """`*` for the whole object, else a short digest of the selected key names (sorted)."""
    if keys is None:
        return WHOLE
    h = xxhash.xxh3_64()
    for name in sorted(k.encode("utf-8", "surrogatepass") for k in keys):
        h.update(encode_field(name))
    return h.hexdigest()
