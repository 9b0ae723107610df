"""What a test does when something it needs is missing (a built control plane, helm, podman, a memory
cgroup): locally it skips saying why; under CI=true or KUBE_REHASH_REAL=1 it fails, so CI never passes by
silently leaving a check out."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def required() -> bool:
    """Whether missing prerequisites fail the test instead of skipping it."""
    return os.environ.get("CI", "").lower() == "true" or os.environ.get("KUBE_REHASH_REAL") == "1"


def skip_or_fail(message: str) -> NoReturn:
    """Skip the calling test with `message`, or fail it when prerequisites are required."""
    if required():
        pytest.fail(message + " (required: CI=true or KUBE_REHASH_REAL=1)", pytrace=False)
    pytest.skip(message)
