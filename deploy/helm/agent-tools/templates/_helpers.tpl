{{/* The release's name for its objects, at most 63 characters. */}}
{{- define "agent-tools.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The labels that select the agent-tools pods. */}}
{{- define "agent-tools.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "agent-tools.labels" -}}
{{ include "agent-tools.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "agent-tools.redisName" -}}
{{- printf "%s-redis" (include "agent-tools.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "agent-tools.redisSelectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}-redis
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "agent-tools.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "agent-tools.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "agent-tools.configMapName" -}}
{{- default (include "agent-tools.fullname" .) .Values.config.existingConfigMap -}}
{{- end -}}

{{/* Whether the pods get a REDIS_URL. */}}
{{- define "agent-tools.hasRedis" -}}
{{- if or .Values.redis.enabled .Values.redis.external.url .Values.redis.external.existingSecret -}}true{{- end -}}
{{- end -}}
