//go:build tools

// Package tools pins the CNCF Distribution registry (github.com/distribution/distribution/v3/cmd/registry) as
// a dependency of this module, so go.mod and go.sum fix its version and every module it builds from;
// scripts/build-registry.sh builds it here. tests/test_image_signing.py runs it on 127.0.0.1 as the one
// registry cosign signs and verifies the image in (no outside registry is reachable).
package tools

import _ "github.com/distribution/distribution/v3/cmd/registry"
