{{/*
Written by hand; the other templates are generated from config/default by
hack/chart (make chart).
*/}}

{{/* The labels the chart adds to every object, next to config/default's. */}}
{{- define "bg-gitops.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
{{- end }}

{{/* The controller image: repository@digest, else repository:tag (default appVersion). */}}
{{- define "bg-gitops.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end }}
