# shellcheck shell=bash
# Sourced by scripts/container-smoke and scripts/compose-smoke: podman as this kind of machine
# needs it, the Debian packages, and the base image both build on.
#
# No container registry is reachable here, so the base image is bootstrapped locally with
# debootstrap (Debian bookworm + python3 + python3-venv) and imported as $BASE_IMAGE; the rootfs
# tarball is cached under $CACHE_DIR, so reruns skip it. Needs root (or sudo) for debootstrap.

BASE_IMAGE="${BASE_IMAGE:-localhost/bookworm-python:latest}"
CACHE_DIR="${CACHE_DIR:-/var/tmp/embedding-service-smoke}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# Who is talking, in every message: the sourcing script's name.
SMOKE="$(basename "$0")"

sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
# The flags that make podman work in this sandbox: runc with cgroupfs (no systemd), and
# open-file/process limits below the sandbox's hard limits (podman's defaults exceed them).
PODMAN_GLOBAL_FLAGS=(--runtime runc --cgroup-manager cgroupfs)
# shellcheck disable=SC2206  # unquoted on purpose: no sudo, no word
podman=($sudo podman "${PODMAN_GLOBAL_FLAGS[@]}")
ULIMITS=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
# Builds: --format docker keeps HEALTHCHECK (the OCI format drops it); the host's network and
# certificates let apt and pip inside the build reach the registries through this machine's setup.
BUILD_FLAGS=(--format docker --network host "${ULIMITS[@]}"
    --volume /etc/ssl/certs:/etc/ssl/certs:ro --build-arg BASE_IMAGE="$BASE_IMAGE")

install_packages() {
    # The Debian packages among "$@" that are not installed yet.
    local missing=() package
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
            || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return
    echo "$SMOKE: installing ${missing[*]}"
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null \
        2> >(grep -v "^debconf: delaying package configuration" >&2)
}

bootstrap_base_image() {
    $sudo mkdir -p "$CACHE_DIR"
    # One bootstrap at a time: both scripts may run at once and share the cache.
    exec {lock}>"$CACHE_DIR/base-image.lock"
    flock "$lock"
    if ! "${podman[@]}" image exists "$BASE_IMAGE"; then
        local tarball="$CACHE_DIR/bookworm-python.tar"
        [ -f "$tarball" ] || debootstrap_base "$tarball"
        "${podman[@]}" import --quiet --change 'CMD ["/bin/bash"]' "$tarball" "$BASE_IMAGE" \
            >/dev/null
    fi
    exec {lock}>&-
}

debootstrap_base() {
    local tarball="$1" rootfs="$CACHE_DIR/rootfs"
    echo "$SMOKE: debootstrapping Debian bookworm into $CACHE_DIR (once)"
    $sudo rm -rf "$rootfs" && $sudo mkdir -p "$rootfs"
    $sudo debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
        bookworm "$rootfs" "$MIRROR" >"$CACHE_DIR/debootstrap.log"
    $sudo rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin \
        "$rootfs"/var/cache/apt/archives/*.deb
    $sudo tar -C "$rootfs" -cf "$tarball.partial" . && $sudo mv "$tarball.partial" "$tarball"
    $sudo rm -rf "$rootfs"
}

build_image() {
    # build_image TAG CONTEXT [DOCKERFILE]: on $BASE_IMAGE, with the flags above.
    local tag="$1" context="$2" dockerfile="${3:-$2/Dockerfile}"
    "${podman[@]}" build "${BUILD_FLAGS[@]}" -t "$tag" -f "$dockerfile" "$context"
}

log_tail() {
    # The last lines of a container's log, to stderr, under a header naming it.
    echo "$SMOKE: last lines of $1's log:" >&2
    "${podman[@]}" logs --tail "${LOG_LINES:-40}" "$1" 2>&1 | sed 's/^/    /' >&2
}

wait_until_healthy() {
    # wait_until_healthy CONTAINER SECONDS: runs the container's healthcheck until it passes.
    # No systemd timers here, so nothing else runs it; a container that stops fails at once.
    local container="$1" deadline=$((SECONDS + $2))
    until "${podman[@]}" healthcheck run "$container" >/dev/null 2>&1; do
        # A restart policy brings a crashed container back at once: a restart counts as a crash.
        local state
        state="$("${podman[@]}" inspect -f '{{.State.Running}} {{.RestartCount}}' "$container")"
        if [ "$state" != "true 0" ]; then
            echo "$SMOKE: $container stopped before it was healthy (restarts: ${state#* })" >&2
            sleep 1  # for the last output of a process that just exited to reach the log
            log_tail "$container"; return 1
        fi
        if [ $SECONDS -ge $deadline ]; then
            echo "$SMOKE: $container is not healthy after $2s" >&2
            log_tail "$container"; return 1
        fi
        sleep 0.5
    done
}
