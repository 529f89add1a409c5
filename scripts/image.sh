#!/usr/bin/env bash
# Builds and proves the Fuseforks image with Docker or Podman (whichever runs here; set
# FUSEFORKS_ENGINE=docker|podman to choose). deploy/README.md, "Building and proving the image".
#
#   scripts/image.sh base              local base images made from Debian's packages, for machines
#                                      that reach no image registry (mmdebstrap; root): the runtime
#                                      base and a Caddy image for compose.door.yaml
#   scripts/image.sh build [--small] [--binary FILE]
#                                      tags localhost/fuseforks:ci (or :ci-small); --binary puts a
#                                      fuseforks-cli built elsewhere in place of the builder stage
#   scripts/image.sh smoke [--small] [TEST ARGS]
#                                      the image's smoke test: cargo test --workspace --test it
#                                      -- image:: (a baked village run in the real image); TEST ARGS
#                                      go to the test binary (--nocapture prints the figures)
#   scripts/image.sh size [--check]    the images' sizes, as the engine counts them (--check: fail
#                                      when one is over its budget)
#
# Environment: RUNTIME_IMAGE, RUST_IMAGE, TOOL_PACKAGES are passed to the build as build args
# when set (`base` prints the RUNTIME_IMAGE it made); FUSEFORKS_CLI_VERSION names the version.
set -euo pipefail
cd "$(dirname "$0")/.."

readonly BASE_IMAGE=localhost/fuseforks-base:bookworm
readonly CADDY_IMAGE=localhost/fuseforks-caddy:bookworm
readonly TAG=localhost/fuseforks:ci
readonly SMALL_TAG=localhost/fuseforks:ci-small

die() { printf 'image.sh: %s\n' "$*" >&2; exit 2; }

# What this run made for itself (a containers.conf, a build context) goes when it ends.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The engine: FUSEFORKS_ENGINE, else a Docker whose daemon answers, else Podman.
pick_engine() {
  if [ -n "${FUSEFORKS_ENGINE:-}" ]; then
    command -v "$FUSEFORKS_ENGINE" >/dev/null || die "FUSEFORKS_ENGINE=$FUSEFORKS_ENGINE is not installed"
    echo "$FUSEFORKS_ENGINE"
  elif command -v docker >/dev/null && docker info >/dev/null 2>&1; then
    echo docker
  elif command -v podman >/dev/null; then
    echo podman
  else
    die "neither a running Docker nor Podman was found: install one (deploy/README.md)"
  fi
}
ENGINE=$(pick_engine)
export FUSEFORKS_ENGINE=$ENGINE

# Podman as root on a machine whose hard limits are below Podman's defaults (nofile 1048576,
# nproc 4194304) cannot start a container ("error setting rlimit"): nofile is the hard limit
# here, nproc 4096 (the sandboxes seen refused 65536 under a hard limit of 96362). runc where
# it is installed (crun failed there: "cgroups in hybrid mode"), cgroupfs where systemd does
# not run. A containers.conf of our own says so,
# unless one was given.
podman_conf() {
  [ "$ENGINE" = podman ] && [ -z "${CONTAINERS_CONF:-}" ] || return 0
  local conf=$scratch/containers.conf nofile nproc=4096
  nofile=$(ulimit -Hn)
  if [ "$nofile" = unlimited ] || [ "$nofile" -gt 1048576 ]; then nofile=1048576; fi
  if [ "$(ulimit -Hu)" != unlimited ] && [ "$(ulimit -Hu)" -lt "$nproc" ]; then nproc=$(ulimit -Hu); fi
  {
    echo '[containers]'
    echo "default_ulimits = [\"nofile=$nofile:$nofile\", \"nproc=$nproc:$nproc\"]"
    echo '[engine]'
    if command -v runc >/dev/null; then echo 'runtime = "runc"'; fi
    if [ ! -d /run/systemd/system ]; then echo 'cgroup_manager = "cgroupfs"'; fi
  } >"$conf"
  export CONTAINERS_CONF=$conf
}
podman_conf

version() {
  if [ -n "${FUSEFORKS_CLI_VERSION:-}" ]; then echo "$FUSEFORKS_CLI_VERSION"; return; fi
  git describe --tags --always 2>/dev/null || echo 0.0.0
}

# The runtime base: Debian's minbase with what the slim images leave out left out (docs, man
# pages, locales, apt lists), /usr merged without the usrmerge package (which pulls in perl).
make_base() {
  command -v mmdebstrap >/dev/null || die "base needs mmdebstrap (apt-get install mmdebstrap)"
  local tar
  tar=$scratch/base.tar
  mmdebstrap --quiet --variant=minbase --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    --dpkgopt='path-exclude=/usr/share/lintian/*' --dpkgopt='path-exclude=/usr/share/groff/*' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/*' \
    bookworm "$tar" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
  "$ENGINE" import --change 'CMD ["bash"]' "$tar" "$BASE_IMAGE" >/dev/null
}

make_caddy() {
  printf '%s\n' "FROM $BASE_IMAGE" \
    'RUN apt-get update && apt-get install -y --no-install-recommends caddy ca-certificates && rm -rf /var/lib/apt/lists/*' \
    'ENV XDG_CONFIG_HOME=/config XDG_DATA_HOME=/data' \
    'CMD ["caddy", "run", "--config", "/etc/caddy/Caddyfile", "--adapter", "caddyfile"]' \
    >"$scratch/Caddy.Dockerfile"
  mkdir "$scratch/empty"
  "$ENGINE" build --network=host -t "$CADDY_IMAGE" -f "$scratch/Caddy.Dockerfile" "$scratch/empty" >/dev/null
}

has_image() { "$ENGINE" image inspect "$1" >/dev/null 2>&1; }

cmd_base() {
  if has_image "$BASE_IMAGE"; then echo "kept $BASE_IMAGE"; else make_base; echo "made $BASE_IMAGE"; fi
  if has_image "$CADDY_IMAGE"; then echo "kept $CADDY_IMAGE"; else make_caddy; echo "made $CADDY_IMAGE"; fi
  echo "RUNTIME_IMAGE=$BASE_IMAGE CADDY_IMAGE=$CADDY_IMAGE"
}

cmd_build() {
  local small="" binary="" tag=$TAG context=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --small) small=1; tag=$SMALL_TAG ;;
      --binary) [ $# -ge 2 ] || die "--binary needs a file"; binary=$2; shift ;;
      *) die "build: unknown option $1" ;;
    esac
    shift
  done
  local args=(build --network=host -f deploy/Dockerfile -t "$tag" --build-arg "FUSEFORKS_CLI_VERSION=$(version)")
  local name
  for name in RUNTIME_IMAGE RUST_IMAGE TOOL_PACKAGES; do
    if [ -n "${!name+set}" ]; then args+=(--build-arg "$name=${!name}"); fi
  done
  if [ -n "$small" ]; then args+=(--target small --build-arg TOOL_PACKAGES=); fi
  if [ -n "$binary" ]; then
    [ -x "$binary" ] || die "--binary $binary is not an executable file"
    context=$scratch/builder
    install -D -m 0755 "$binary" "$context/usr/local/bin/fuseforks-cli"
    args+=(--build-context "builder=$context")
  fi
  "$ENGINE" "${args[@]}" .
  echo "built $tag"
}

cmd_smoke() {
  local image=$TAG
  if [ "${1:-}" = --small ]; then image=$SMALL_TAG; shift; fi
  has_image "$image" || die "no image $image: run scripts/image.sh build first"
  FUSEFORKS_IMAGE=$image FUSEFORKS_CADDY_IMAGE=${CADDY_IMAGE_OVERRIDE:-$CADDY_IMAGE} \
    cargo test --workspace --locked --test it -- image:: --test-threads 1 "$@"
}

# The images' sizes as the engine counts them (uncompressed); with --check, each must be
# within its budget (deploy/README.md): 120 MB for the full image, 40 MB for --small.
cmd_size() {
  local check="" image limit size failed=""
  [ "${1:-}" = --check ] && check=1
  for image in "$TAG:120000000" "$SMALL_TAG:40000000"; do
    limit=${image##*:}; image=${image%:*}
    has_image "$image" || continue
    size=$("$ENGINE" image inspect --format '{{.Size}}' "$image")
    printf '%s %s bytes (budget %s)\n' "$image" "$size" "$limit"
    if [ -n "$check" ] && [ "$size" -gt "$limit" ]; then failed=1; fi
  done
  [ -z "$failed" ] || die "an image is over its size budget"
}

[ $# -ge 1 ] || die "usage: image.sh base | build [--small] [--binary FILE] | smoke [--small] [TEST ARGS] | size [--check]"
sub=$1; shift
case "$sub" in
  base) cmd_base "$@" ;;
  build) cmd_build "$@" ;;
  smoke) cmd_smoke "$@" ;;
  size) cmd_size "$@" ;;
  *) die "unknown command $sub (base, build, smoke, size)" ;;
esac
