{{- define "slipway-agent.namespace" -}}
{{- default .Release.Namespace .Values.namespace.name -}}
{{- end -}}

{{- define "slipway-agent.secretName" -}}
{{- default "slipway-agent-enrollment" .Values.existingSecret -}}
{{- end -}}

{{/* The labels of every object: the install's own (kubernetes-install.ts installLabels), then Helm's. */}}
{{- define "slipway-agent.selectorLabels" -}}
app.kubernetes.io/name: slipway-agent
app.kubernetes.io/component: agent
{{- end -}}

{{- define "slipway-agent.labels" -}}
{{ include "slipway-agent.selectorLabels" . }}
app.kubernetes.io/part-of: slipway
slipway.dev/cluster-id: {{ required "clusterId is required" .Values.clusterId | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}
