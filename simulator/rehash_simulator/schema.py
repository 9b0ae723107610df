"""The fields of every built-in kind the simulator serves, as Kubernetes defines them (k8s_schema.json).

One table behind three answers a real server gives from its Go types: decoding the protobuf bodies kubectl
sends (protobuf.py), rejecting or warning about unknown fields (`fieldValidation`, fields.py) and the OpenAPI
v3 documents kubectl validates manifests and computes apply patches with (openapi.py). The table is written by
scripts/gen_schema.py from k8s.io/api and k8s.io/apimachinery of versions.KUBERNETES_VERSION.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources

# The message types mapped by hand rather than field by field (protobuf.py, openapi.py): Time, MicroTime,
# Duration, Quantity, IntOrString and the raw-JSON holders RawExtension and FieldsV1.
TIME = "time"
MICROTIME = "microtime"
DURATION = "duration"
QUANTITY = "quantity"
INT_OR_STRING = "intorstring"
RAW_JSON = "rawjson"
SCALARS = ("string", "int32", "int64", "bool", "bytes")


@dataclass(frozen=True)
class Field:
    """One field of a message: its protobuf number and type, and how Go writes it as JSON."""

    number: int
    json: str
    type: str  # a scalar of SCALARS or a definition name
    list: bool = False
    map: str | None = None  # the value type of a map (keys are strings)
    ptr: bool = False
    omit: str = ""  # "empty" (omitempty), "zero" (omitzero) or ""
    inline: bool = False
    patch_strategy: str = ""
    merge_key: str = ""

    @property
    def value_type(self) -> str:
        """The type of one element: the map's value, the list's item, or the field's own."""
        return self.map if self.map is not None else self.type


@dataclass(frozen=True, eq=False)
class Schema:
    special: dict[str, str]
    kinds: dict[str, str]
    definitions: dict[str, tuple[Field, ...]]
    source: str

    def definition(self, api_version: str, kind: str) -> str | None:
        """The definition of a served built-in kind, or None (custom resources, unknown kinds)."""
        return self.kinds.get(f"{api_version}/{kind}")

    def fields(self, name: str) -> tuple[Field, ...]:
        return self.definitions[name]

    @functools.cache  # noqa: B019 - the schema lives as long as the process
    def json_fields(self, name: str) -> dict[str, Field]:
        """{JSON name: field} of a definition, with inlined members' fields in place of the member."""
        found: dict[str, Field] = {}
        for f in self.definitions[name]:
            if f.inline:
                found.update(self.json_fields(f.type))
            else:
                found[f.json] = f
        return found


def _field(raw: dict[str, object]) -> Field:
    return Field(
        number=int(str(raw["n"])),
        json=str(raw["json"]),
        type=str(raw["type"]),
        list=bool(raw.get("list")),
        map=str(raw["map"]) if "map" in raw else None,
        ptr=bool(raw.get("ptr")),
        omit=str(raw.get("omit", "")),
        inline=bool(raw.get("inline")),
        patch_strategy=str(raw.get("patchStrategy", "")),
        merge_key=str(raw.get("mergeKey", "")),
    )


@functools.cache
def load() -> Schema:
    raw = json.loads(resources.files(__package__).joinpath("k8s_schema.json").read_text())
    return Schema(
        special=dict(raw["special"]),
        kinds=dict(raw["kinds"]),
        definitions={name: tuple(_field(f) for f in fields) for name, fields in raw["definitions"].items()},
        source=str(raw["source"]),
    )
