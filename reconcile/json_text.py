"""JSON text decoded with `orjson`, and with the standard library where `orjson` refuses it.

Why: a steady pass decodes every list page of every watched kind and source kind, and every opted-in
workload's `sources` annotation; at 10x the benchmark's cluster that is about 60 MB of JSON a pass, the
largest single cost of the pass's own thread. `orjson` decodes it about three times as fast as `json.loads`
(docs/engineering/performance-history.md, "A faster JSON decoder"). The values are the same for what an API
server sends; where
`orjson` refuses text the standard library accepts (an escaped lone surrogate, `NaN`), the standard library
decodes it, so what decodes at all is still `json.loads`'s rule; bytes must be UTF-8 (RFC 8259), as the API
client requires of a response. One difference remains: an integer beyond 64 bits, which no API server
sends (Kubernetes' integers are int64), comes back a float.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def load_json(text: str | bytes) -> Any:
    """The value of JSON text, a str or its UTF-8 bytes (RFC 8259: JSON exchanged is UTF-8); ValueError when
    it is not JSON, or its bytes not UTF-8."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text.decode("utf-8") if isinstance(text, bytes) else text)
