"""Read kubeconfig files with PyYAML and pick one context's cluster and user, the way kubectl does.

It exists so a pass never imports the `kubernetes` package (its `__init__` loads the whole generated
client, ~19 MB of memory) just to read a YAML file. Semantics follow kubectl: a `:`-separated list of
files is merged with the first file to define a cluster, user or context name (and the first to set
current-context) winning; a relative path in an entry is resolved against the directory of the file
that defined that entry; `*-data` fields override their file counterparts. Inline certificates and keys
are written to private (0600) temporary files, once per content, removed when the process exits,
because `requests` only takes file paths.
"""

from __future__ import annotations

import atexit
import base64
import binascii
import contextlib
import hashlib
import os
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from reconcile.errors import CredentialsError

SECTIONS = (("clusters", "cluster"), ("users", "user"), ("contexts", "context"))

_private_files: dict[str, str] = {}
_private_files_lock = threading.Lock()


@dataclass(frozen=True)
class Entry:
    """One named cluster or user: its fields and the directory of the file that defined it."""

    name: str
    fields: Mapping[str, Any]
    base: str


@dataclass(frozen=True)
class Selection:
    """The chosen context's cluster and user; `where` names the files and context for error messages."""

    where: str
    context: str
    cluster: Entry
    user: Entry


def read_kubeconfig_file(path: str) -> dict[str, Any]:
    """Parse one kubeconfig file and check its shape; raise CredentialsError naming the file."""
    try:
        with open(path, encoding="utf-8") as handle:
            document = yaml.safe_load(handle)
    except OSError as exc:
        raise CredentialsError(f"kubeconfig {path}: cannot read: {exc.strerror or exc}") from None
    except (yaml.YAMLError, UnicodeDecodeError):
        raise CredentialsError(f"kubeconfig {path}: not valid YAML") from None
    if not isinstance(document, dict):
        raise CredentialsError(f"kubeconfig {path}: empty or not a mapping")
    for key, _ in SECTIONS:
        entries = document.get(key) or []
        if not isinstance(entries, list) or not all(isinstance(e, dict) and "name" in e for e in entries):
            raise CredentialsError(f"kubeconfig {path}: {key} must be a list of named entries")
    return document


def select_context(paths: Sequence[str], context: str | None) -> Selection:
    """Merge the files (the first to define a name wins) and resolve `context` or the current-context."""
    where = "kubeconfig " + ":".join(paths)
    merged: dict[str, dict[str, Entry]] = {key: {} for key, _ in SECTIONS}
    current = ""
    for path in paths:
        document = read_kubeconfig_file(path)
        current = current or str(document.get("current-context") or "")
        base = os.path.dirname(path)
        for key, field in SECTIONS:
            for item in document.get(key) or []:
                name = str(item["name"])
                fields = item.get(field) or {}
                if not isinstance(fields, dict):
                    raise CredentialsError(
                        f"kubeconfig {path}: {key[:-1]} {name!r}: {field} must be a mapping"
                    )
                merged[key].setdefault(name, Entry(name, fields, base))
    chosen = context or current
    if not chosen:
        raise CredentialsError(f"{where}: no current-context set and no --context given")
    found = merged["contexts"].get(chosen)
    if found is None:
        listed = ", ".join(merged["contexts"]) or "none"
        raise CredentialsError(f"{where}: context {chosen!r} not found (contexts: {listed})")
    where = f"{where} context {chosen}"
    cluster = _pick(merged["clusters"], found.fields.get("cluster"), "cluster", where, required=True)
    user = _pick(merged["users"], found.fields.get("user"), "user", where, required=False)
    return Selection(where, chosen, cluster, user)


def _pick(entries: dict[str, Entry], name: Any, kind: str, where: str, *, required: bool) -> Entry:
    if not name:
        if required:
            raise CredentialsError(f"{where}: the context names no {kind}")
        return Entry("", {}, "")
    entry = entries.get(str(name))
    if entry is None:
        raise CredentialsError(f"{where}: {kind} {str(name)!r} not found")
    return entry


def resolve_path(entry: Entry, value: str) -> str:
    """A path from a kubeconfig entry, `~` expanded, relative ones against the defining file's directory."""
    expanded = os.path.expanduser(value)
    return os.path.normpath(expanded if os.path.isabs(expanded) else os.path.join(entry.base, expanded))


def get_string(entry: Entry, key: str, where: str) -> str | None:
    """A string field (None when absent or empty); raise CredentialsError when it is not a scalar."""
    value = entry.fields.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, dict | list):
        raise CredentialsError(f"{where}: {key} must be a string")
    return str(value)


def file_or_data(entry: Entry, file_key: str, where: str) -> str | None:
    """The path of `file_key`, or of a private copy of `file_key`-data (which overrides the file)."""
    data = get_string(entry, f"{file_key}-data", where)
    if data is not None:
        try:
            content = base64.b64decode(data.encode(), validate=True)
        except (binascii.Error, ValueError):
            raise CredentialsError(f"{where}: {file_key}-data is not valid base64") from None
        return write_private_file(content)
    name = get_string(entry, file_key, where)
    if name is None:
        return None
    path = resolve_path(entry, name)
    if not os.path.isfile(path):
        raise CredentialsError(f"{where}: {file_key} {path}: file not found")
    return path


def write_private_file(content: bytes) -> str:
    """A 0600 temporary file holding `content` (one per distinct content), removed at exit."""
    digest = hashlib.sha256(content).hexdigest()
    with _private_files_lock:
        existing = _private_files.get(digest)
        if existing is not None and os.path.isfile(existing):
            return existing
        descriptor, path = tempfile.mkstemp(prefix="kube-rehash-")  # mkstemp creates it 0600
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(content)
        if not _private_files:
            atexit.register(remove_private_files)
        _private_files[digest] = path
        return path


def remove_private_files() -> None:
    """Delete the temporary copies of inline certificates and keys."""
    with _private_files_lock:
        for path in _private_files.values():
            with contextlib.suppress(OSError):
                os.unlink(path)
        _private_files.clear()
