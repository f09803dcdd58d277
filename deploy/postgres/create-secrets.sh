#!/usr/bin/env bash
# Creates, once, the Secrets a production Worklane install expects in its namespace:
#   worklane-db-<service>  kubernetes.io/basic-auth for CloudNativePG's managed role (username,
#                          password) plus `uri`, the service's DATABASE_URL;
#   worklane-keys          WEBHOOK_SECRET_KEY;
#   worklane-signing-<p>   kubernetes.io/tls: an Ed25519 key pair (tls.key, and tls.crt, a
#                          self-signed certificate holding the public key) for each principal
#                          that signs internal calls: gateway, console, issue, delivery, cli.
# Existing Secrets are left untouched, so rerunning it never rotates a password or a key.
# With a secrets manager (External Secrets, Vault), create the same names and keys there instead.
#
#   deploy/postgres/create-secrets.sh [namespace] [cnpg-cluster-name]
set -euo pipefail
namespace="${1:-worklane}"
cluster="${2:-worklane-db}"
host="${cluster}-rw.${namespace}.svc"

exists() { kubectl -n "$namespace" get secret "$1" >/dev/null 2>&1; }
random() { openssl rand -hex "$1"; }

for service in token project webhook issue delivery; do
  name="worklane-db-${service}"
  if exists "$name"; then echo "kept    ${name}"; continue; fi
  password="$(random 24)"
  # sslmode=require: CNPG serves TLS only; use verify-full with the cluster CA (Secret
  # ${cluster}-ca) mounted and sslrootcert set if the services must verify the server too.
  kubectl -n "$namespace" create secret generic "$name" \
    --type=kubernetes.io/basic-auth \
    --from-literal=username="$service" \
    --from-literal=password="$password" \
    --from-literal=uri="postgresql://${service}:${password}@${host}:5432/${service}?sslmode=require"
  kubectl -n "$namespace" label secret "$name" cnpg.io/reload=true app.kubernetes.io/part-of=worklane
  echo "created ${name}"
done

if exists worklane-keys; then
  echo "kept    worklane-keys"
else
  kubectl -n "$namespace" create secret generic worklane-keys \
    --from-literal=WEBHOOK_SECRET_KEY="$(random 32)"
  kubectl -n "$namespace" label secret worklane-keys app.kubernetes.io/part-of=worklane
  echo "created worklane-keys (back it up: it decrypts every stored webhook secret)"
fi

for principal in gateway console issue delivery cli; do
  name="worklane-signing-${principal}"
  if exists "$name"; then echo "kept    ${name}"; continue; fi
  dir="$(mktemp -d)"
  openssl genpkey -algorithm ed25519 -out "$dir/tls.key"
  openssl req -x509 -new -key "$dir/tls.key" -subj "/CN=worklane-${principal}" -days 36500 -out "$dir/tls.crt"
  kubectl -n "$namespace" create secret tls "$name" --cert="$dir/tls.crt" --key="$dir/tls.key"
  kubectl -n "$namespace" label secret "$name" app.kubernetes.io/part-of=worklane
  rm -rf "$dir"
  echo "created ${name}"
done
