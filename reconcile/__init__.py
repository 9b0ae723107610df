"""kube-rehash: roll Kubernetes workloads whose ConfigMaps or Secrets changed, in one stateless pass."""

__version__ = "0.1.0"
