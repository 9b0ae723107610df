#!/usr/bin/env bash
# Build the real krew (kubectl's plugin manager) the release tests install the plugin archive with
# (tests/test_dist.py, `make krew`) from Go modules: sigs.k8s.io/krew/cmd/krew at the version pinned by
# tools/krew/go.mod (+ go.sum), so `kubectl krew install --manifest … --archive …` is krew's own code. Cached in
# .cache/krew/<version>/ (scripts/go-tool.sh); a cold build takes about 15 s.
set -euo pipefail
# shellcheck source=scripts/go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh"
# krew's own version variable, so `krew version` names the pinned release.
build_go_tool krew sigs.k8s.io/krew '^v[0-9]+\.[0-9]+\.[0-9]+$' sigs.k8s.io/krew/cmd/krew \
    '-X sigs.k8s.io/krew/internal/version.gitTag=$VERSION'
