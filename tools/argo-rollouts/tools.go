//go:build tools

// Package tools pins the Argo Rollouts controller (github.com/argoproj/argo-rollouts/cmd/rollouts-controller) as a
// dependency of this module, so go.mod and go.sum fix its version and every module it builds from;
// scripts/build-argo-rollouts.sh builds it from here and copies the Rollout CRDs from its manifests/crds/.
package tools

import _ "github.com/argoproj/argo-rollouts/cmd/rollouts-controller"
