//go:build tools

// Package tools pins the promtool CLI (github.com/prometheus/prometheus/cmd/promtool) as a dependency of this
// module, so go.mod and go.sum fix its version and every module it builds from; scripts/build-promtool.sh builds
// it from here.
package tools

import _ "github.com/prometheus/prometheus/cmd/promtool"
