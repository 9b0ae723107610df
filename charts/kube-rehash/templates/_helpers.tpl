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

{{/* The image; an empty repository is refused: no kube-rehash image is published, each user builds and
pushes their own. */}}
{{- define "kube-rehash.image" -}}
{{- $repository := required "image.repository is empty: no kube-rehash image is published. Build it from the repository (make image), push it to a registry your cluster pulls from (docs/release.md) and set image.repository (and image.tag) to it, e.g. --set image.repository=registry.example.com/platform/kube-rehash" .Values.image.repository -}}
{{- if .Values.image.digest -}}
{{ $repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ $repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end -}}
{{- end }}

{{/* The namespaces the pass reconciles, as a JSON list (fromJsonArray): scope.namespaces, else
config.namespaces (a config file naming namespaces gets Roles there, never a ClusterRole); empty: the
whole cluster. Both set must agree: scope.namespaces are passed as -n flags, which override the file. */}}
{{- define "kube-rehash.namespaces" -}}
{{- $scope := .Values.scope.namespaces | default (list) -}}
{{- $config := .Values.config.namespaces | default (list) -}}
{{- if and $scope $config (ne (toJson $scope) (toJson $config)) -}}
{{- fail (printf "scope.namespaces %s and config.namespaces %s differ: set one of them (either grants a Role in each namespace listed and no cluster-wide permission)" (toJson $scope) (toJson $config)) -}}
{{- end -}}
{{- toJson ($scope | default $config) -}}
{{- end }}

{{/* The kinds a pass lists when argoRollouts is false: config.kinds without Rollout (as
cronjob/components/without-argo-rollouts sets them). */}}
{{- define "kube-rehash.kindsWithoutRollouts" -}}
{{- without .Values.config.kinds "Rollout" | join "," -}}
{{- end }}

{{/* The RBAC rules, in the order the Kustomize overlays render them: cronjob/cluster/clusterrole.yaml (rule 1,
Secrets, narrowed by secretsGetOnly; rule 2, Rollouts, dropped by argoRollouts: false, as the
without-argo-rollouts component does), then one block per feature switch in the order of the components
(secrets-store-csi and run-on-change, which cluster/ lists; namespace-selector; evict). A new feature's rules:
one block below behind its value, one component appending the same rules. */}}
{{- define "kube-rehash.rules" -}}
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list]
- apiGroups: [""]
  resources: [secrets]
  verbs: {{ if .Values.secretsGetOnly }}[get]{{ else }}[get, list]{{ end }}
{{- if and .Values.argoRollouts (has "Rollout" .Values.config.kinds) }}
- apiGroups: [argoproj.io]
  resources: [rollouts]
  verbs: [get, list, patch]
{{- end }}
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
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create]
{{- if .Values.secretsStoreCsi }}
- apiGroups: [""]
  resources: [pods]
  verbs: [list]
- apiGroups: [secrets-store.csi.x-k8s.io]
  resources: [secretproviderclasspodstatuses]
  verbs: [list]
{{- end }}
{{- if .Values.runOnChange }}
- apiGroups: [batch]
  resources: [jobs]
  verbs: [create]
{{- end }}
{{- if .Values.config.namespaceSelector }}
{{- if fromJsonArray (include "kube-rehash.namespaces" .) }}
{{- fail "config.namespaceSelector lists the cluster's namespaces: it needs the cluster scope (scope.namespaces and config.namespaces empty)" }}
{{- end }}
- apiGroups: [""]
  resources: [namespaces]
  verbs: [list]
{{- end }}
{{- if or .Values.evict (eq .Values.config.restart "evict") }}
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
