#!/usr/bin/env bash
# Builds all seven Worklane service images with one tag.
#
#   tools/images/build.sh [--push] [--tag TAG] [--registry REGISTRY] [--platforms LIST]
#
# TAG defaults to `git describe --tags --always --dirty` (a release tag, else the short commit);
# REGISTRY to docker.io/worklane, so images are <REGISTRY>/<service>:<TAG>, which is what
# charts/worklane deploys with image.registry/image.namespace and image.tag set to match.
# Uses `docker buildx bake` (docker-bake.hcl); without --push the images are loaded locally, for
# the host platform only (multi-platform images can only be pushed).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

push=false
registry="${REGISTRY:-docker.io/worklane}"
tag="${TAG:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}"
platforms="${PLATFORMS:-linux/amd64,linux/arm64}"

while [ $# -gt 0 ]; do
  case "$1" in
    --push) push=true ;;
    --tag) tag="$2"; shift ;;
    --registry) registry="$2"; shift ;;
    --platforms) platforms="$2"; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done

if ! docker buildx version >/dev/null 2>&1; then
  echo "docker buildx is required (Docker 23+ ships it)" >&2
  exit 1
fi

args=(--file docker-bake.hcl)
if $push; then
  args+=(--push)
else
  args+=(--load)
  platforms="$(docker version --format '{{.Server.Os}}/{{.Server.Arch}}')"
fi

echo "building ${registry}/<service>:${tag} for ${platforms}, for every service of docker-bake.hcl"
TAG="$tag" REGISTRY="$registry" REVISION="$(git rev-parse HEAD 2>/dev/null || true)" PLATFORMS="$platforms" \
  docker buildx bake "${args[@]}"
echo "done: helm upgrade --install worklane charts/worklane --set image.registry=${registry%%/*} --set image.namespace=${registry#*/} --set image.tag=${tag}"
