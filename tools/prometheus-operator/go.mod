// Pins the Prometheus Operator module (nothing is built from it) for its PrometheusRule CRD,
// example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml: tests/real/test_monitoring_install.py
// installs that CRD into the real control plane before `helm install` of the chart with its PrometheusRule.
// `go mod download` fetches the module zip and checks it against go.sum.
module github.com/kube-rehash/kube-rehash/tools/prometheus-operator

go 1.26.0

require github.com/prometheus-operator/prometheus-operator v0.85.0
