#!/usr/bin/env bash
# Builds the vendored LazyFS (test/vendor/lazyfs) for the power-cut tests and prints the binary's path. The build
# goes to OUT_DIR, by default ~/.cache/threatcol-lazyfs/<hash of the sources and of this script>, so later runs
# reuse it (npm test and npm run soak call this first, keeping the one slow build out of the test files' time limit).
# Usage: build-lazyfs.sh [--if-possible] [OUT_DIR]
# Exit 0: the path on stdout. Exit 3: LazyFS cannot be built or used here, the reason on stderr (the tests skip;
# --if-possible exits 0 then). Anything else: the build itself failed (its log is printed).
set -euo pipefail
if_possible=false
if [ "${1:-}" = --if-possible ]; then
  if_possible=true
  shift
fi
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
repo=$(cd "$(dirname "$self")/../.." && pwd)
src="$repo/test/vendor/lazyfs"
cannot() {
  echo "LazyFS cannot be built here: $*" >&2
  if $if_possible; then exit 0; fi
  exit 3
}
[ -c /dev/fuse ] || cannot "no /dev/fuse (a container needs --device /dev/fuse)"
[ -r /dev/fuse ] && [ -w /dev/fuse ] || cannot "/dev/fuse is not open to $(id -un) (run as root)"
key=$(
  cd "$src"
  { find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum; cat "$self"; } | sha256sum | cut -c1-16
)
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/threatcol-lazyfs/$key}
bin="$out/lazyfs/build/lazyfs"
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

command -v dpkg >/dev/null || cannot "no dpkg to find or install its build packages (Debian or Ubuntu needed)"
need=()
for p in g++ make cmake libfuse3-dev fuse3 libspdlog-dev libtoml11-dev; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || cannot "not root, and these packages are missing: ${need[*]}"
  echo "installing ${need[*]} for LazyFS" >&2
  install() { DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >&2; }
  install || { apt-get update -q >&2 && install; } || cannot "apt-get install ${need[*]} failed"
fi

# One build at a time (test files may start together); the second waits and then finds the binary.
mkdir -p "$(dirname "$out")" 2>/dev/null || cannot "cannot create $(dirname "$out")"
exec 9>"$out.lock"
flock 9
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
echo "building LazyFS into $out (once; about 1-2 minutes on 2 cores)" >&2
started=$(date +%s)
log="$out.build.log"
rm -rf "$out" && mkdir -p "$out" && cp -r "$src/lazyfs" "$src/libs" "$out/"
# libpcache is a shared library found through the binary's RUNPATH: the build stays where it was made.
if ! {
  (cd "$out/libs/libpcache" && mkdir -p build && cd build && cmake .. && cmake --build . -j2) &&
    (cd "$out/lazyfs" && mkdir -p build && cd build && cmake -DLAZYFS_BUILD_TESTS=OFF .. && cmake --build . -j2)
} >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  rm -rf "$out"
  echo "building LazyFS failed (log above)" >&2
  exit 1
fi
echo "LazyFS built in $(($(date +%s) - started)) s: $bin" >&2
echo "$bin"
