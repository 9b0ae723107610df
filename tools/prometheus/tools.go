//go:build tools

// Package tools pins the Prometheus server (github.com/prometheus/prometheus/cmd/prometheus) as a dependency of
// this module, at the version tools/promtool/go.mod pins promtool at (scripts/build-prometheus.sh checks they are
// the same), so go.mod and go.sum fix every module it builds from. The tests run it as a real OTLP receiver
// (--web.enable-otlp-receiver); scripts/build-prometheus.sh builds it from here.
package tools

import _ "github.com/prometheus/prometheus/cmd/prometheus"
