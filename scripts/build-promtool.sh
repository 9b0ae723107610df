#!/usr/bin/env bash
# Build the real promtool the monitoring tests use (tests/test_monitoring.py, `make promtool`) from Go modules:
# github.com/prometheus/prometheus/cmd/promtool at the version pinned by tools/promtool/go.mod (+ go.sum), so the
# alert rules are checked and unit-tested by Prometheus's own parser and rule evaluator, never by a look-alike.
#
# Output: $PROMTOOL_CACHE/<module version>/promtool (default .cache/promtool/), cached by a stamp
# (scripts/go-tool.sh). A cold build takes about 5 minutes on a 2-core machine (the Prometheus module pulls every
# service-discovery SDK).
set -euo pipefail

TOOL=promtool
source "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh"
MOD="$ROOT/tools/promtool"

go_tool_require
VERSION=$(go_tool_version github.com/prometheus/prometheus)
[[ $VERSION =~ ^v0\.([0-9]+)([0-9]{2})\.([0-9]+)$ ]] ||
    go_tool_fail "cannot read the github.com/prometheus/prometheus version from $MOD/go.mod"
# The Go module v0.MMmm.p is Prometheus release MM.mm.p (v0.316.0 is Prometheus 3.16.0).
RELEASE="${BASH_REMATCH[1]}.$((10#${BASH_REMATCH[2]})).${BASH_REMATCH[3]}"
LABEL="$RELEASE ($VERSION)"
go_tool_init "$VERSION" "${PROMTOOL_CACHE:-}"
go_tool_cached promtool && exit 0
# Prometheus's own version variables, so `promtool --version` names the pinned release.
go_tool_build github.com/prometheus/prometheus/cmd/promtool "-X github.com/prometheus/common/version.Version=$RELEASE" promtool
go_tool_finish promtool
