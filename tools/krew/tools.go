//go:build tools

// Package tools pins the krew CLI (sigs.k8s.io/krew/cmd/krew) as a dependency of this module, so go.mod and
// go.sum fix its version and every module it builds from; scripts/build-krew.sh builds it from here.
package tools

import _ "sigs.k8s.io/krew/cmd/krew"
