// Builds every Worklane service image with one tag:
//   TAG=1.4.0 REGISTRY=registry.example.com/worklane docker buildx bake --push
// (tools/images/build.sh wraps this.) Every service is built from the one Dockerfile,
// tools/images/Dockerfile, with the service as its SERVICE build argument and the repository
// root as context. The lists below are generated from the service table (packages/config/src/
// service-table.ts; each image is named after its service) by `npm run generate -w @worklane/testing`;
// a test fails when they are stale.

variable "REGISTRY" {
  default = "docker.io/worklane"
}

variable "TAG" {
  default = "dev"
}

// The git commit, recorded as an OCI label.
variable "REVISION" {
  default = ""
}

variable "PLATFORMS" {
  default = "linux/amd64,linux/arm64"
}

group "default" {
  targets = ["gateway", "token", "project", "webhook", "issue", "delivery", "console"]
}

target "_common" {
  context   = "."
  platforms = split(",", PLATFORMS)
  labels = {
    "org.opencontainers.image.version"  = TAG
    "org.opencontainers.image.revision" = REVISION
    "org.opencontainers.image.source"   = "https://github.com/worklane/worklane"
  }
}

target "service" {
  name       = svc
  matrix     = { svc = ["gateway", "token", "project", "webhook", "issue", "delivery", "console"] }
  inherits   = ["_common"]
  dockerfile = "tools/images/Dockerfile"
  args       = { SERVICE = svc }
  tags       = ["${REGISTRY}/${svc}:${TAG}"]
}
