#!/usr/bin/env bash
# Compiles the native code (core and binding, every file of native/sources.gypi) for targets this machine cannot
# run, so the portable paths (io/os_win.cc, the non-x86 fallbacks) are at least compiled on every CI run:
#   win-x64      Debian's mingw-w64 (x86_64-w64-mingw32-g++), against Windows headers: io/os_win.cc
#   linux-arm64  Debian's g++-aarch64-linux-gnu: no x86 intrinsics, the portable kernels; linked into an
#                aarch64 neardup.node (N-API and OpenSSL symbols left to the host, as for any addon)
# Nothing is run: Windows is compiled with GCC's dialect (mingw), not MSVC/ClangCL, and macOS is not compiled.
#
#   tools/cross-compile.sh [--install] [win-x64] [linux-arm64]     (no target: both)
# --install installs the missing Debian packages (CI). Objects go to a temporary folder removed at exit.
set -euo pipefail
cd "$(dirname "$0")/.."

install=0
targets=()
for a in "$@"; do
  case "$a" in
    --install) install=1 ;;
    win-x64 | linux-arm64) targets+=("$a") ;;
    *) echo "cross-compile: unknown argument '$a' (expected --install, win-x64, linux-arm64)" >&2; exit 2 ;;
  esac
done
[ ${#targets[@]} -eq 0 ] && targets=(win-x64 linux-arm64)

compiler() {
  case "$1" in
    win-x64) echo x86_64-w64-mingw32-g++-posix ;;
    linux-arm64) echo aarch64-linux-gnu-g++ ;;
  esac
}
# The C compiler of the same toolchain (zstd, native/third_party/zstd).
c_compiler() {
  case "$1" in
    win-x64) echo x86_64-w64-mingw32-gcc-posix ;;
    linux-arm64) echo aarch64-linux-gnu-gcc ;;
  esac
}
package() {
  case "$1" in
    win-x64) echo g++-mingw-w64-x86-64-posix ;;
    linux-arm64) echo g++-aarch64-linux-gnu ;;
  esac
}

missing=()
for t in "${targets[@]}"; do
  command -v "$(compiler "$t")" >/dev/null 2>&1 || missing+=("$(package "$t")")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$install" = 1 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >/dev/null
  else
    echo "cross-compile: missing ${missing[*]} (apt-get install them, or pass --install)" >&2
    exit 1
  fi
fi

jobs=$(nproc 2>/dev/null || echo 2)
node_include="$(node -p "require('path').join(process.execPath, '..', '..', 'include', 'node')")"
[ -f "$node_include/node_api.h" ] || node_include="$(npm config get nodedir)/include/node"
[ -f "$node_include/node_api.h" ] || { echo "cross-compile: Node's headers not found (node_api.h)" >&2; exit 1; }
addon_include="$(node -p "require('node-addon-api').include_dir")"
# zstd's C sources, from node_modules/zstd-napi (as binding.gyp and CMake do).
node tools/zstd-sources.mjs
mapfile -t core < <(node -p "JSON.parse(require('fs').readFileSync('native/sources.gypi','utf8')).variables.neardup_core_sources.join('\n')")
mapfile -t binding < <(node -p "JSON.parse(require('fs').readFileSync('native/sources.gypi','utf8')).variables.neardup_binding_sources.join('\n')")
mapfile -t zstd < <(node -p "JSON.parse(require('fs').readFileSync('native/sources.gypi','utf8')).variables.neardup_zstd_sources.join('\n')")

out="$(mktemp -d "${TMPDIR:-/tmp}/neardup-cross-XXXXXX")"
trap 'rm -rf "$out"' EXIT

failed=0
for t in "${targets[@]}"; do
  cxx="$(compiler "$t")"
  start=$(date +%s)
  mkdir -p "$out/$t"
  flags=(-std=c++17 -O2 -fvisibility=hidden -fexceptions -Wall -Wextra -Wno-unused-parameter
    -Inative/core -Inative/third_party/zstd/lib -I"$addon_include" -I"$node_include"
    -DNAPI_VERSION=8 -DNAPI_CPP_EXCEPTIONS -DNODE_ADDON_API_DISABLE_DEPRECATED -DNEARDUP_HAVE_NODE_OPENSSL=1)
  cflags=(-O2 -fvisibility=hidden -DZSTD_DISABLE_ASM -DZSTD_NO_TRACE -DXXH_NAMESPACE=ZSTD_ -DZSTDLIB_VISIBLE= -DZSTDERRORLIB_VISIBLE=)
  [ "$t" = linux-arm64 ] && flags+=(-fPIC) && cflags+=(-fPIC)
  objs=()
  running=0
  for src in "${zstd[@]}" "${core[@]}" "${binding[@]}"; do
    o="$out/$t/$(echo "$src" | tr / _).o"
    objs+=("$o")
    if [[ "$src" == *.c ]]; then
      ( "$(c_compiler "$t")" "${cflags[@]}" -c "$src" -o "$o" > "$o.log" 2>&1 || echo "FAILED" >> "$o.log" ) &
    else
      ( "$cxx" "${flags[@]}" -c "$src" -o "$o" > "$o.log" 2>&1 || echo "FAILED" >> "$o.log" ) &
    fi
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
  done
  wait
  warnings=0
  for src in "${zstd[@]}" "${core[@]}" "${binding[@]}"; do
    log="$out/$t/$(echo "$src" | tr / _).o.log"
    if grep -q '^FAILED$' "$log"; then
      echo "cross-compile $t: $src does not compile:" >&2
      sed '/^FAILED$/d' "$log" >&2
      failed=1
    elif [ -s "$log" ]; then
      warnings=$((warnings + $(grep -c 'warning:' "$log" || true)))
      cat "$log" >&2
    fi
  done
  linked=""
  if [ "$failed" = 0 ] && [ "$t" = linux-arm64 ]; then
    # An addon is a shared object whose N-API (and, here, OpenSSL) symbols come from the node executable.
    if "$cxx" -shared -pthread -o "$out/$t/neardup.node" "${objs[@]}" 2> "$out/$t/link.log"; then
      machine="$(readelf -h "$out/$t/neardup.node" | sed -n 's/^ *Machine: *//p')"
      linked=", linked neardup.node ($machine)"
      [ "$machine" = AArch64 ] || { echo "cross-compile $t: linked for '$machine'" >&2; failed=1; }
    else
      cat "$out/$t/link.log" >&2
      failed=1
    fi
  fi
  echo "cross-compile $t: ${#objs[@]} files with $cxx, $warnings warnings$linked, $(($(date +%s) - start)) s"
done
exit "$failed"
