#!/usr/bin/env bash
# Build the real syft that writes the release's SBOMs (scripts/sbom-dist.py, `make syft`) from Go modules:
# github.com/anchore/syft/cmd/syft at the version pinned by tools/syft/go.mod (+ go.sum), cached in
# .cache/syft/<version>/ (scripts/go-tool.sh). A cold build took about 3 minutes on a 2-core machine.
set -euo pipefail
# shellcheck source=scripts/go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh"
# syft's version variable, so `syft version` and the SBOM's creator name the pinned release.
build_go_tool syft github.com/anchore/syft '^v1\.[0-9]+\.[0-9]+$' github.com/anchore/syft/cmd/syft \
    '-X main.version=$VERSION'
