"""A real Kubernetes control plane for tests: pinned Go builds (scripts/build-control-plane.sh) and their
launcher.

The API simulator is our own reading of the API; this package runs the real kube-apiserver, etcd,
kube-controller-manager, kube-scheduler and kwok (fake nodes) on loopback, for tests/real and `make cluster`.
"""
