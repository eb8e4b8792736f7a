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

{{/*
How the kube-apiserver verifies podpilot's serving certificate, one of:
certManager (tls.certManager.enabled), secret (tls.secretName), insecure
(tls.insecureSkipTLSVerify: podpilot's in-memory self-signed certificate,
unverified) or generated (the default: a CA and a certificate made by Helm).
*/}}
{{- define "podpilot.tlsMode" -}}
{{- $tls := .Values.tls }}
{{- if and $tls.insecureSkipTLSVerify (or $tls.certManager.enabled $tls.secretName) }}
{{- fail "tls.insecureSkipTLSVerify turns verification off: set it without tls.certManager.enabled and tls.secretName" }}
{{- end }}
{{- if $tls.certManager.enabled }}certManager
{{- else if $tls.secretName }}secret
{{- else if $tls.insecureSkipTLSVerify }}insecure
{{- else }}generated
{{- end }}
{{- end }}

{{/* The Secret with podpilot's serving certificate; empty in insecure mode. */}}
{{- define "podpilot.tlsSecret" -}}
{{- $mode := include "podpilot.tlsMode" . }}
{{- if eq $mode "certManager" }}podpilot-tls
{{- else if eq $mode "secret" }}{{ .Values.tls.secretName }}
{{- else if eq $mode "generated" }}podpilot-generated-tls
{{- end }}
{{- end }}

{{/*
The generated CA and serving certificate, base64-encoded as Secret data:
reused from the Secret of an earlier release (lookup), so an upgrade keeps
them and the APIServices' caBundle; otherwise made once per rendering (the
first caller stores them for the others). helm template, which cannot look
up, makes new ones on every run.
*/}}
{{- define "podpilot.generatedTLS" -}}
{{- if not (hasKey .Values.tls "_generated") }}
{{- $found := lookup "v1" "Secret" .Release.Namespace "podpilot-generated-tls" }}
{{- $data := dig "data" (dict) $found }}
{{- if and (index $data "ca.crt") (index $data "tls.crt") (index $data "tls.key") }}
{{- $_ := set .Values.tls "_generated" (dict "ca" (index $data "ca.crt") "crt" (index $data "tls.crt") "key" (index $data "tls.key")) }}
{{- else }}
{{- $days := int .Values.tls.generated.validityDays }}
{{- $ca := genCA "podpilot-ca" $days }}
{{- $svc := printf "podpilot.%s.svc" .Release.Namespace }}
{{- $names := list "podpilot" (printf "podpilot.%s" .Release.Namespace) $svc (printf "%s.cluster.local" $svc) }}
{{- $cert := genSignedCert $svc nil $names $days $ca }}
{{- $_ := set .Values.tls "_generated" (dict "ca" ($ca.Cert | b64enc) "crt" ($cert.Cert | b64enc) "key" ($cert.Key | b64enc)) }}
{{- end }}
{{- end }}
{{- toYaml .Values.tls._generated }}
{{- end }}

{{/* The TLS settings of an APIService. */}}
{{- define "podpilot.apiserviceTLS" -}}
{{- $mode := include "podpilot.tlsMode" . }}
{{- if eq $mode "secret" }}
caBundle: {{ required "tls.caBundle is required with tls.secretName" .Values.tls.caBundle }}
{{- else if eq $mode "generated" }}
caBundle: {{ (include "podpilot.generatedTLS" . | fromYaml).ca }}
{{- else if eq $mode "insecure" }}
insecureSkipTLSVerify: true
{{- end }}
{{- end }}

{{/* The annotations of an APIService. */}}
{{- define "podpilot.apiserviceAnnotations" -}}
{{- if eq (include "podpilot.tlsMode" .) "certManager" }}
annotations:
  cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/podpilot
{{- end }}
{{- end }}

{{/* podpilot's image: the tag defaults to the chart's appVersion. */}}
{{- define "podpilot.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}
