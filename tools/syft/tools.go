//go:build tools

// Package tools pins the syft CLI (github.com/anchore/syft/cmd/syft) as a dependency of this module, so
// go.mod and go.sum fix its version and every module it builds from; scripts/build-syft.sh builds it here.
package tools

import _ "github.com/anchore/syft/cmd/syft"
