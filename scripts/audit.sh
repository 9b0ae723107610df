#!/usr/bin/env bash
# Supply-chain audit: pip-audit over the hash-pinned test lock (which includes the runtime set).
# pip-audit is installed into a throwaway venv in /tmp; it queries the package registry's
# vulnerability data only. Not wired into the Makefile; run it by hand or from CI:
#   bash scripts/audit.sh [requirements/test.txt]
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
lock="${1:-$root/requirements/test.txt}"
python="${PYTHON:-python3}"
venv="$(mktemp -d /tmp/kube-rehash-audit.XXXXXX)"
trap 'rm -rf "$venv"' EXIT

"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check pip-audit
# --no-deps + --disable-pip: audit exactly the pinned set without resolving again; --strict: a package
# that could not be looked up (e.g. no network) fails the audit instead of passing silently.
"$venv/bin/pip-audit" --requirement "$lock" --no-deps --disable-pip --strict --progress-spinner off --desc on
