//go:build tools

// Package tools pins the helm CLI (helm.sh/helm/v4/cmd/helm) as a dependency of this module, so go.mod and
// go.sum fix its version and every module it builds from; scripts/build-helm.sh builds it from here.
package tools

import _ "helm.sh/helm/v4/cmd/helm"
