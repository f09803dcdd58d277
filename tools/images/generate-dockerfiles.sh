#!/usr/bin/env bash
# Writes services/<name>/Dockerfile for every service from tools/images/Dockerfile.template.
# The seven images differ only in the service name, so they are generated rather than copied.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
for dir in "$root"/services/*/; do
  service="$(basename "$dir")"
  sed "s/__SERVICE__/${service}/g" "$root/tools/images/Dockerfile.template" > "$dir/Dockerfile"
  echo "services/${service}/Dockerfile"
done
