"""Differential conformance of the API simulator against the real kube-apiserver (docs/conformance.md)."""
