#!/usr/bin/env bash
# Build the real Prometheus server the OTLP tests push to (tests/test_otlp_receiver.py, `make prometheus`) from Go
# modules: github.com/prometheus/prometheus/cmd/prometheus at the version tools/prometheus/go.mod pins, which must
# be the version tools/promtool/go.mod pins promtool at (one Prometheus release for the rules and the receiver).
# Its go.sum is its own: the server imports modules promtool does not (the web UI, tracing exporters).
#
# Output: $PROMETHEUS_CACHE/<module version>/prometheus (default .cache/prometheus/), cached by a stamp
# (scripts/go-tool.sh). The web UI's assets are not embedded (no `builtinassets` tag): the tests use the HTTP API
# and the OTLP receiver only.
set -euo pipefail

TOOL=prometheus
source "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh"
MOD="$ROOT/tools/prometheus"

go_tool_require
VERSION=$(go_tool_version github.com/prometheus/prometheus)
PROMTOOL_VERSION=$(MOD="$ROOT/tools/promtool" go_tool_version github.com/prometheus/prometheus)
[[ $VERSION == "$PROMTOOL_VERSION" ]] ||
    go_tool_fail "tools/prometheus pins $VERSION but tools/promtool pins $PROMTOOL_VERSION: pin the same release"
[[ $VERSION =~ ^v0\.([0-9]+)([0-9]{2})\.([0-9]+)$ ]] ||
    go_tool_fail "cannot read the github.com/prometheus/prometheus version from $MOD/go.mod"
# The Go module v0.MMmm.p is Prometheus release MM.mm.p (v0.316.0 is Prometheus 3.16.0).
RELEASE="${BASH_REMATCH[1]}.$((10#${BASH_REMATCH[2]})).${BASH_REMATCH[3]}"
LABEL="$RELEASE ($VERSION)"
go_tool_init "$VERSION" "${PROMETHEUS_CACHE:-}"
go_tool_cached prometheus && exit 0
go_tool_build github.com/prometheus/prometheus/cmd/prometheus "-X github.com/prometheus/common/version.Version=$RELEASE" prometheus
go_tool_finish prometheus
