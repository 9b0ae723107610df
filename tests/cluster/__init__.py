"""A real Kubernetes control plane for tests: pinned Go builds (scripts/build-control-plane.sh) and their
launcher.

kube-rehash was tested only against its own API simulator; this package runs the real kube-apiserver, etcd,
kube-controller-manager, kube-scheduler and kwok (fake nodes) on loopback, for tests/real and `make cluster`.
"""
