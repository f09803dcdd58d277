{{/*
Names and labels, after bitnami's common helpers. Every name is cut to 63 characters, the
limit of a DNS label and of a label value.
*/}}

{{- define "worklane.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "worklane.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The name of one component's objects: <fullname>-<component>. The prefix, not the component, is
cut to fit 63 characters, so names stay distinct even for the longest release names.
Takes (dict "root" $ "component" "gateway").
*/}}
{{- define "worklane.componentName" -}}
{{- $prefix := include "worklane.fullname" .root | trunc (int (sub 62 (len .component))) | trimSuffix "-" -}}
{{- printf "%s-%s" $prefix .component -}}
{{- end -}}

{{- define "worklane.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Selector labels: only what never changes over a release's life (name, instance, component), so
Deployments, Services, PDBs and NetworkPolicies keep matching across upgrades.
Takes (dict "root" $ "component" "gateway").
*/}}
{{- define "worklane.selectorLabels" -}}
app.kubernetes.io/name: {{ include "worklane.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* All labels of an object. Takes (dict "root" $ "component" "gateway"). */}}
{{- define "worklane.labels" -}}
{{ include "worklane.selectorLabels" . }}
app.kubernetes.io/part-of: worklane
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ include "worklane.chart" .root }}
{{- with .root.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The Kubernetes name of one service's ServiceAccount. Takes (dict "root" $ "component" "gateway"). */}}
{{- define "worklane.serviceAccountName" -}}
{{- $sa := (include "worklane.serviceValues" . | fromYaml).serviceAccount -}}
{{- if $sa.create -}}
{{- default (include "worklane.componentName" .) $sa.name -}}
{{- else -}}
{{- default "default" $sa.name -}}
{{- end -}}
{{- end -}}

{{/* Image reference of one service. Takes (dict "root" $ "component" "gateway"). */}}
{{- define "worklane.image" -}}
{{- $global := .root.Values.image -}}
{{- $own := (include "worklane.serviceValues" . | fromYaml).image | default dict -}}
{{- $repository := $own.repository | default (printf "%s/%s/%s" $global.registry $global.namespace .component) -}}
{{- if $own.digest -}}
{{- printf "%s@%s" $repository $own.digest -}}
{{- else -}}
{{- printf "%s:%s" $repository ($own.tag | default $global.tag | default .root.Chart.AppVersion | toString) -}}
{{- end -}}
{{- end -}}
