#!/bin/sh
# Builds bench/simhash-seomoz/driver.cpp against seomoz simhash-cpp's Judy table (its commit a9b21b0, src/).
#   bench/simhash-seomoz/build.sh SEOMOZ_SRC_DIR OUT     (needs g++ and libjudy-dev)
# e.g. git -C simhash-cpp archive a9b21b0 src | tar -x -C /tmp/seomoz-judy
#      bench/simhash-seomoz/build.sh /tmp/seomoz-judy/src /tmp/seomoz-judy/driver
set -e
src=${1:?seomoz src dir (commit a9b21b0)}
out=${2:?output binary}
here=$(cd "$(dirname "$0")" && pwd)
# -O3 as seomoz's own Makefile builds it
g++ -O3 -std=c++11 -w -I"$src" -o "$out" "$here/driver.cpp" "$src/simhash.cpp" -lJudy
