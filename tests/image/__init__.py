"""Building and running the kube-rehash image for the tests (podman): see pod.py."""
