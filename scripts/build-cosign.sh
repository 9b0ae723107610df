#!/usr/bin/env bash
# Build the real cosign the release tests sign and verify with (tests/test_dist_signing.py,
# tests/test_image_signing.py, `make cosign`) from Go modules: github.com/sigstore/cosign/v3/cmd/cosign at the
# version pinned by tools/cosign/go.mod (+ go.sum), cached in .cache/cosign/<version>/ (scripts/go-tool.sh).
# A cold build takes a few minutes on a 2-core machine.
set -euo pipefail
# shellcheck source=scripts/go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh"
# cosign's version variable (sigs.k8s.io/release-utils), so `cosign version` names the pinned release.
build_go_tool cosign github.com/sigstore/cosign/v3 '^v3\.[0-9]+\.[0-9]+$' github.com/sigstore/cosign/v3/cmd/cosign \
    '-X sigs.k8s.io/release-utils/version.gitVersion=$VERSION'
