"""Logging to stderr as text or JSON lines, so the report on stdout stays machine-readable.

Nothing logs Secret content: log calls carry names, hashes and Status messages only.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

from reconcile.model.choices import Format

LEVELS = {0: logging.WARNING, 1: logging.INFO}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        doc = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            doc["error"] = self.formatException(record.exc_info).splitlines()[-1]
        return json.dumps(doc, ensure_ascii=False)


def setup_logging(fmt: Format = Format.TEXT, verbosity: int = 0) -> None:
    """(Re)configure the root logger; called once from flags and again once settings are loaded."""
    handler = logging.StreamHandler(sys.stderr)
    if fmt is Format.JSON:
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)-7s %(message)s", "%H:%M:%S"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(LEVELS.get(verbosity, logging.DEBUG))
    # urllib3 logs request URLs at debug; they are harmless, but keep the library quiet below -vvv.
    logging.getLogger("urllib3").setLevel(logging.DEBUG if verbosity >= 3 else logging.WARNING)
