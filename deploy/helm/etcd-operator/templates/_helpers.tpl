{{- define "etcd-operator.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{- define "etcd-operator.labels" -}}
app.kubernetes.io/name: etcd-operator
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{- define "etcd-operator.meta" -}}
name: etcd-operator
namespace: {{ .Release.Namespace }}
labels:
  {{- include "etcd-operator.labels" . | nindent 2 }}
{{- end }}

{{- define "etcd-operator.subjects" -}}
subjects:
  - kind: ServiceAccount
    name: etcd-operator
    namespace: {{ .Release.Namespace }}
{{- end }}
