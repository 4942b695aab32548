# syntax=docker/dockerfile:1
#
# placement-syncd container image.
#
#   docker build -t placement-syncd \
#     --build-arg VERSION=$(git describe --tags --always --dirty) \
#     --build-arg COMMIT=$(git rev-parse HEAD) .
#   docker run -d --name placement -p 8778:8778 -v placement-data:/var/lib/placement-syncd \
#     -v $PWD/placement-syncd.yaml:/etc/placement-syncd/placement-syncd.yaml:ro placement-syncd
#   curl -s -H "X-Auth-Token: $(openstack token issue -f value -c id)" http://127.0.0.1:8778/resource_providers
#   curl -s http://127.0.0.1:8778/metrics
#
# The image runs `serve` with /etc/placement-syncd/placement-syncd.yaml
# (configs/container.yaml: the API on 0.0.0.0:8778 with Keystone
# authentication, the database in the /var/lib/placement-syncd volume,
# JSON logs on stderr). As shipped that file refuses to start, naming the
# Keystone settings to fill in (auth_url, and the password placeholder):
# mount your own copy over it. If you move the API port, override the
# HEALTHCHECK too.

# --- build -----------------------------------------------------------------
# Where the two stages start from; a registry mirror or a locally built
# Debian base can stand in (scripts/test-image builds one with debootstrap).
ARG GO_IMAGE=golang:1.26-bookworm
ARG BASE_IMAGE=debian:bookworm-slim
# The SQLite driver (github.com/mattn/go-sqlite3) is cgo, so the build
# needs gcc and the binary links against glibc: build and run on the same
# Debian release. packaging/build-binary is the Debian package's build too
# (scripts/build-deb): same flags, same hardening. To use a binary built
# elsewhere, replace this stage with a directory holding
# out/placement-syncd: --build-context build=DIR.
FROM ${GO_IMAGE} AS build
WORKDIR /src
# Modules first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    packaging/build-binary /out/placement-syncd "${VERSION}" "${COMMIT}" \
 && /out/placement-syncd version

# --- run -------------------------------------------------------------------
FROM ${BASE_IMAGE}
# ca-certificates: HTTPS to Keystone, Nova and Ironic; curl: the
# HEALTHCHECK below.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 placement \
 && useradd --system --uid 10001 --gid placement --home-dir /var/lib/placement-syncd --shell /usr/sbin/nologin placement \
 && install -d -o placement -g placement -m 0750 /var/lib/placement-syncd \
 && install -d -m 0755 /etc/placement-syncd
COPY --from=build /out/placement-syncd /usr/local/bin/placement-syncd
COPY configs/container.yaml /etc/placement-syncd/placement-syncd.yaml
USER placement:placement
WORKDIR /var/lib/placement-syncd
VOLUME ["/var/lib/placement-syncd"]
# The Placement API; /metrics is served on it unless metrics.listen says
# otherwise.
EXPOSE 8778
# GET / is Placement's version document: open to anonymous clients, and
# answered only once the database is open and the listener is up.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["curl", "-fsS", "-o", "/dev/null", "http://127.0.0.1:8778/"]
# SIGTERM: stop accepting, finish in-flight requests (api.shutdown_grace),
# exit 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/placement-syncd"]
CMD ["serve", "--config", "/etc/placement-syncd/placement-syncd.yaml"]
