//go:build tools

// Package tools pins the cosign CLI (github.com/sigstore/cosign/v3/cmd/cosign) as a dependency of this module,
// so go.mod and go.sum fix its version and every module it builds from; scripts/build-cosign.sh builds it here.
package tools

import _ "github.com/sigstore/cosign/v3/cmd/cosign"
