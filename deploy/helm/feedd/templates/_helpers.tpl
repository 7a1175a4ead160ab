{{/* The chart's name, and the release's full name (63 characters at most: a DNS label). */}}
{{- define "feedd.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "feedd.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "feedd.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "feedd.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Every pod of the release carries these; the metrics Service selects them all. */}}
{{- define "feedd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "feedd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The pods of one component: (dict "root" $ "component" "serve"). */}}
{{- define "feedd.componentSelectorLabels" -}}
{{ include "feedd.selectorLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "feedd.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "feedd.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "feedd.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/*
feedd.envName: the environment variable of a flag, as feedd's flagenv
names it: --inbox-cap is FEED_INBOX_CAP, --redis is FEED_REDIS_URL.
*/}}
{{- define "feedd.envName" -}}
{{- if eq . "redis" }}FEED_REDIS_URL{{ else }}{{ printf "FEED_%s" (. | replace "-" "_" | upper) }}{{ end }}
{{- end }}

{{/*
feedd.flagValue: a value as the flag parses it. YAML numbers reach a
template as float64, which would print 10000000 as 1e+07: whole numbers
print as integers.
*/}}
{{- define "feedd.flagValue" -}}
{{- if and (kindIs "float64" .) (eq (. | int64 | float64) .) }}{{ . | int64 }}{{ else }}{{ . }}{{ end }}
{{- end }}

{{/*
feedd.configEnv renders a map of flag name to value as FEED_* variables,
refusing names that are not flag names and flags the structured values set.
(dict "config" MAP "where" "config")
*/}}
{{- define "feedd.configEnv" -}}
{{- $reserved := list "redis" "key-prefix" "addr" "ops-addr" "workers" "shutdown-timeout" "shutdown-delay" "jwt-secret" "jwt-public-key" "jwt-jwks-file" "cursor-key" "persisted-only" }}
{{- range $name, $value := .config }}
{{- if not (regexMatch "^[a-z][a-z0-9]*(-[a-z0-9]+)*$" $name) }}
{{- fail (printf "%s: %q is not a flag name: use the flag's name without dashes, like inbox-cap (feedd serve --help lists them)" $.where $name) }}
{{- end }}
{{- if has $name $reserved }}
{{- fail (printf "%s: %s is set by the chart's own values (redis.*, secrets.*, serve.*, opsPort): set it there (docs/deploying.md)" $.where $name) }}
{{- end }}
{{- if kindIs "invalid" $value }}
{{- fail (printf "%s: %s has no value: give one, or remove the line" $.where $name) }}
{{- end }}
- name: {{ include "feedd.envName" $name }}
  value: {{ include "feedd.flagValue" $value | quote }}
{{- end }}
{{- end }}

{{/* feedd.secretEnv: NAME from key KEY of the existing Secret. (dict "root" $ "name" NAME "key" KEY) */}}
{{- define "feedd.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ .root.Values.secrets.existingSecret }}
      key: {{ .key }}
{{- end }}

{{/*
feedd.commonEnv: what serve and worker share: Redis, the secrets, tracing,
the ops listener and `config`, then the component's own config.
(dict "root" $ "component" "serve" "config" MAP)
*/}}
{{- define "feedd.commonEnv" -}}
{{- $v := .root.Values }}
{{- $s := $v.secrets }}
{{- if and (not $s.existingSecret) (or $s.jwtSecretKey $s.jwtPublicKeyKey $s.jwksKey $s.cursorKeyKey $s.redisURLKey) }}
{{- fail "secrets: a key is named but secrets.existingSecret is empty: name the Secret that holds it" }}
{{- end }}
{{- if $s.redisURLKey }}
{{ include "feedd.secretEnv" (dict "root" .root "name" "FEED_REDIS_URL" "key" $s.redisURLKey) }}
{{- else if $v.redis.url }}
- name: FEED_REDIS_URL
  value: {{ $v.redis.url | quote }}
{{- else }}
{{- fail "redis.url is empty (feedd would run an embedded, per-pod store): give the URL of your Redis or Redis Cluster, or secrets.redisURLKey" }}
{{- end }}
{{- if $v.redis.keyPrefix }}
{{- if regexMatch "[{}]" $v.redis.keyPrefix }}
{{- fail "redis.keyPrefix must not contain { or }: keys carry their own {hash tags}" }}
{{- end }}
- name: FEED_KEY_PREFIX
  value: {{ $v.redis.keyPrefix | quote }}
{{- end }}
{{- if $s.cursorKeyKey }}
{{ include "feedd.secretEnv" (dict "root" .root "name" "FEED_CURSOR_KEY" "key" $s.cursorKeyKey) }}
{{- end }}
- name: FEED_OPS_ADDR
  value: {{ printf ":%d" (int $v.opsPort) | quote }}
{{- if $v.tracing.enabled }}
{{- if not $v.tracing.endpoint }}
{{- fail "tracing.enabled: give tracing.endpoint, the OTLP collector (http://collector:4318)" }}
{{- end }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ $v.tracing.endpoint | quote }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: {{ $v.tracing.protocol | quote }}
- name: OTEL_TRACES_SAMPLER
  value: {{ $v.tracing.sampler | quote }}
{{- if $v.tracing.samplerArg }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ $v.tracing.samplerArg | quote }}
{{- end }}
{{- if $v.tracing.resourceAttributes }}
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ $v.tracing.resourceAttributes | quote }}
{{- end }}
{{- end }}
{{- include "feedd.configEnv" (dict "config" (merge (deepCopy (.config | default dict)) $v.config) "where" (printf "config or %s.config" .component)) }}
{{- with $v.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* feedd.topologySpread: one constraint a topology key, over one component's pods. */}}
{{- define "feedd.topologySpread" -}}
{{- $t := .root.Values.topologySpread }}
{{- if $t.enabled }}
topologySpreadConstraints:
{{- range $t.topologyKeys }}
  - maxSkew: {{ $t.maxSkew }}
    topologyKey: {{ . }}
    whenUnsatisfiable: {{ $t.whenUnsatisfiable }}
    labelSelector:
      matchLabels:
        {{- include "feedd.componentSelectorLabels" (dict "root" $.root "component" $.component) | nindent 8 }}
    matchLabelKeys:
      - pod-template-hash
{{- end }}
{{- end }}
{{- end }}

{{/* feedd.podCommon: the pod spec fields serve and worker share. */}}
{{- define "feedd.podCommon" -}}
{{- $v := .Values }}
serviceAccountName: {{ include "feedd.serviceAccountName" . }}
automountServiceAccountToken: false
securityContext:
  {{- toYaml $v.podSecurityContext | nindent 2 }}
{{- with $v.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with $v.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* The files serve reads: the JWKS from the Secret, the persisted-query allow-list, extraVolumeMounts. */}}
{{- define "feedd.serveMounts" -}}
{{- if .Values.secrets.jwksKey }}
- name: jwks
  mountPath: /etc/feedd/jwks
  readOnly: true
{{- end }}
{{- if .Values.serve.persistedQueries.configMap }}
- name: persisted
  mountPath: /etc/feedd/persisted
  readOnly: true
{{- end }}
{{- with .Values.extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "feedd.serveVolumes" -}}
{{- if .Values.secrets.jwksKey }}
- name: jwks
  secret:
    secretName: {{ .Values.secrets.existingSecret }}
    items:
      - key: {{ .Values.secrets.jwksKey }}
        path: jwks.json
{{- end }}
{{- with .Values.serve.persistedQueries }}
{{- if .configMap }}
- name: persisted
  configMap:
    name: {{ .configMap }}
    items:
      - key: {{ .key }}
        path: persisted.json
{{- end }}
{{- end }}
{{- with .Values.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end }}
