{{/* The object names are fixed (kube-rehash, kube-rehash-config, kube-rehash-hash-key) as in cronjob/: one
install per cluster, and the manifests, docs and RBAC proofs name them. */}}

{{- define "kube-rehash.labels" -}}
app.kubernetes.io/name: kube-rehash
app.kubernetes.io/part-of: kube-rehash
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "kube-rehash.metadata" -}}
labels:
  {{- include "kube-rehash.labels" . | nindent 2 }}
{{- with .Values.commonAnnotations }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{- define "kube-rehash.serviceAccountName" -}}
{{- default "kube-rehash" .Values.serviceAccount.name }}
{{- end }}

{{- define "kube-rehash.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end -}}
{{- end }}

{{/* The RBAC rules of cronjob/cluster/clusterrole.yaml (rule 1, Secrets, narrowed to get by secretsGetOnly). */}}
{{- define "kube-rehash.rules" -}}
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list]
- apiGroups: [""]
  resources: [secrets]
  verbs: {{ if .Values.secretsGetOnly }}[get]{{ else }}[get, list]{{ end }}
- apiGroups: [apps]
  resources: [deployments, statefulsets, daemonsets]
  verbs: [get, list, patch]
- apiGroups: [apps]
  resources: [replicasets]
  verbs: [list]
- apiGroups: [apps]
  resources: [controllerrevisions]
  verbs: [get, list]
- apiGroups: [batch]
  resources: [cronjobs]
  verbs: [get, list, patch]
- apiGroups: [argoproj.io]
  resources: [rollouts]
  verbs: [get, list, patch]
- apiGroups: [""]
  resources: [pods]
  verbs: [list]
- apiGroups: [secrets-store.csi.x-k8s.io]
  resources: [secretproviderclasspodstatuses]
  verbs: [list]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create]
- apiGroups: [batch]
  resources: [jobs]
  verbs: [create]
{{- if .Values.config.namespaceSelector }}
{{- if .Values.scope.namespaces }}
{{- fail "config.namespaceSelector lists the cluster's namespaces: it needs the cluster scope (scope.namespaces: [])" }}
{{- end }}
- apiGroups: [""]
  resources: [namespaces]
  verbs: [list]
{{- end }}
{{- if .Values.evict }}
- apiGroups: [""]
  resources: [pods]
  verbs: [list]
- apiGroups: [""]
  resources: [pods/eviction]
  verbs: [create]
{{- end }}
{{- if or .Values.openreports (eq (toString .Values.config.reports) "openreports") }}
- apiGroups: [openreports.io]
  resources: [reports]
  verbs: [list, create, patch]
{{- end }}
{{- end }}
