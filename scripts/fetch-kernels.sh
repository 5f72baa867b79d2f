#!/usr/bin/env bash
# Downloads real Debian cloud kernel packages for kbench-boot's tests into a cache
# dir, once: the newest linux-image-6.1*-cloud-ARCH and linux-image-6.12*-cloud-ARCH
# the configured apt sources know.
#
#   scripts/fetch-kernels.sh          # amd64, into $KBENCH_KERNEL_CACHE
#   scripts/fetch-kernels.sh arm64    # arm64, into $KBENCH_KERNEL_CACHE/arm64 (needs
#                                     # dpkg --add-architecture arm64)
#
# Prints the directory. Names are resolved from apt-cache each time because
# the ABI number in them moves with every stable update. A series apt does not know
# (6.12 needs bookworm-backports or trixie) is reported and skipped, not an error.
set -euo pipefail
arch=${1:-amd64}
cache=${KBENCH_KERNEL_CACHE:-$HOME/.cache/kbench/kernels}
case $arch in
    amd64) ;;
    arm64) cache=$cache/arm64 ;;
    *)
        echo "fetch-kernels: unknown architecture '$arch' (amd64 or arm64)" >&2
        exit 2
        ;;
esac
mkdir -p "$cache"

# Prints the newest signed (or plain) image package of a series, e.g. 6.1 -> linux-image-6.1.0-48-cloud-amd64.
newest_package() {
    local series=$1
    apt-cache search --names-only "^linux-image-${series//./\\.}(\\.[0-9]+)*[-+][^ ]*-cloud-${arch}$" |
        awk '{print $1}' | sort -V | tail -n 1
}

updated=false
# Stale apt lists can miss a series or name a package the mirror no longer has:
# refresh them once, then try again.
refresh_lists() {
    if ! $updated; then
        updated=true
        sudo=""
        [[ $(id -u) -ne 0 ]] && sudo="sudo"
        $sudo apt-get update -qq >&2 || true
    fi
}

fetch() {
    local pkg=$1
    (cd "$cache" && apt-get download -q "$pkg:$arch" >&2)
}

for series in 6.1 6.12; do
    pkg=$(newest_package "$series")
    if [[ -z $pkg ]]; then
        refresh_lists
        pkg=$(newest_package "$series")
    fi
    if [[ -z $pkg ]]; then
        echo "fetch-kernels: apt knows no linux-image-${series}*-cloud-${arch}; skipped" >&2
        continue
    fi
    if compgen -G "$cache/${pkg}_*.deb" >/dev/null; then
        continue
    fi
    echo "fetch-kernels: downloading $pkg into $cache" >&2
    # A failed download (no network) leaves the tests to skip, not the whole test run
    # to stop; scripts/test.sh decides whether that is acceptable.
    fetch "$pkg" || { refresh_lists; fetch "$(newest_package "$series")"; } ||
        echo "fetch-kernels: could not download $pkg; its tests will skip" >&2
done
echo "$cache"
