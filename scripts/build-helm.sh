#!/usr/bin/env bash
# Build the real helm CLI the chart tests use (tests/test_chart.py, `make helm`) from Go modules: helm.sh/helm/v4
# at the version pinned by tools/helm/go.mod (+ go.sum), so the tests never depend on whatever helm a machine has.
#
# Output: $HELM_CACHE/<helm version>/helm (default .cache/helm/), cached by a stamp (scripts/go-tool.sh).
set -euo pipefail

TOOL=helm
source "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh"
MOD="$ROOT/tools/helm"

go_tool_require
VERSION=$(go_tool_version helm.sh/helm/v4)
[[ $VERSION =~ ^v4\.[0-9]+\.[0-9]+$ ]] || go_tool_fail "cannot read the helm.sh/helm/v4 version from $MOD/go.mod"
go_tool_init "$VERSION" "${HELM_CACHE:-}"
go_tool_cached helm && exit 0
# helm's own version variables, so `helm version` names the pinned release rather than "main".
go_tool_build helm.sh/helm/v4/cmd/helm "-X helm.sh/helm/v4/internal/version.version=$VERSION" helm
go_tool_finish helm
