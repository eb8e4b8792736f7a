{{/* Labels of every object, as manifests/kustomization.yaml adds them. */}}
{{- define "podpilot.labels" -}}
app.kubernetes.io/part-of: podpilot
{{- end }}

{{/* Labels of the objects that select or belong to podpilot's pods. */}}
{{- define "podpilot.selfLabels" -}}
app.kubernetes.io/name: podpilot
{{ include "podpilot.labels" . }}
{{- end }}

{{/* The ServiceAccount subject of podpilot's bindings. */}}
{{- define "podpilot.subject" -}}
- kind: ServiceAccount
  name: podpilot
  namespace: {{ .Release.Namespace }}
{{- end }}

{{/* Whether podpilot serves a certificate the APIServices can verify. */}}
{{- define "podpilot.tlsSecret" -}}
{{- if .Values.tls.certManager.enabled -}}podpilot-tls{{- else -}}{{ .Values.tls.secretName }}{{- end -}}
{{- end }}

{{/* The TLS settings of an APIService. */}}
{{- define "podpilot.apiserviceTLS" -}}
{{- if .Values.tls.certManager.enabled }}
{{- else if .Values.tls.secretName }}
caBundle: {{ required "tls.caBundle is required with tls.secretName" .Values.tls.caBundle }}
{{- else }}
insecureSkipTLSVerify: true
{{- end }}
{{- end }}

{{/* The annotations of an APIService. */}}
{{- define "podpilot.apiserviceAnnotations" -}}
{{- if .Values.tls.certManager.enabled }}
annotations:
  cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/podpilot
{{- end }}
{{- end }}
