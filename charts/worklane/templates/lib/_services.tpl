{{/*
The services: their catalog entries (_catalog.tpl, generated from the service table) and their
values. templates/services.yaml renders every object of every service from these.
*/}}

{{/* One service's catalog entry as a dict. Takes (dict "root" $ "component" "gateway"). */}}
{{- define "worklane.service" -}}
{{- $catalog := include "worklane.catalog" . | fromYaml -}}
{{- if not (hasKey $catalog .component) -}}
{{- fail (printf "unknown Worklane service %q" .component) -}}
{{- end -}}
{{- index $catalog .component | toYaml -}}
{{- end -}}

{{/* Names of the services that use PostgreSQL, as a YAML list. */}}
{{- define "worklane.databaseServices" -}}
{{- $names := list -}}
{{- range $name, $svc := include "worklane.catalog" . | fromYaml -}}
{{- if $svc.database -}}{{- $names = append $names $name -}}{{- end -}}
{{- end -}}
{{- toYaml $names -}}
{{- end -}}

{{/*
One service's values, as YAML: `serviceDefaults`, with the service's own block (`gateway:`,
`token:`, ...) over it, key by key. A service without a block of its own runs on the defaults.
Takes (dict "root" $ "component" "gateway").
*/}}
{{- define "worklane.serviceValues" -}}
{{- $own := index .root.Values .component | default dict -}}
{{- mergeOverwrite (deepCopy .root.Values.serviceDefaults) (deepCopy $own) | toYaml -}}
{{- end -}}

{{/* The objects every service gets, in the order they are written out. */}}
{{- define "worklane.serviceObjects" -}}
[worklane.serviceAccount, worklane.configMap, worklane.k8sService, worklane.deployment, worklane.hpa, worklane.pdb, worklane.networkPolicy, worklane.serviceMonitor, worklane.migrationJob]
{{- end -}}
