#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build of tlslab's DNS fuzz targets.
# The builder sets CC, CXX, CFLAGS, CXXFLAGS, LIB_FUZZING_ENGINE and OUT. Out come, for each
# target: the binary, <target>_seed_corpus.zip (the dnslib corpus plus fuzz/regressions),
# <target>.dict and <target>.options.
# Locally (fuzz/README.md):
#   CC=clang-14 CXX=clang++-14 CFLAGS="-fsanitize=address,fuzzer-no-link -g -O1" CXXFLAGS="$CFLAGS" \
#   LIB_FUZZING_ENGINE=-fsanitize=fuzzer OUT=/tmp/ossfuzz-out fuzz/oss-fuzz/build.sh
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
# The seed corpus needs dnslib (apt: python3-dnslib): Debian's interpreter when there is one.
PYTHON=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
mkdir -p "$OUT" "$SCRATCH/obj"

# The DNS sources of the client, once: client/CMakeLists.txt's tlsnb_dns is exactly the client/dns_*.cc files.
objects=()
for source in "$ROOT"/client/dns_*.cc; do
  object="$SCRATCH/obj/$(basename "$source" .cc).o"
  $CXX $CXXFLAGS -std=c++17 -I"$ROOT/client" -c "$source" -o "$object"
  objects+=("$object")
done

targets=(fuzz_dns_response fuzz_dns_name fuzz_dns_stream fuzz_dns_judge6)
if pkg-config --exists libcares; then
  targets+=(fuzz_dns_cares)  # linked statically: the runner image has no libc-ares
else
  echo "build.sh: no libcares (apt install libc-ares-dev): fuzz_dns_cares not built" >&2
fi

"$PYTHON" "$ROOT/fuzz/make_corpus.py" --out "$SCRATCH/corpus"
for target in "${targets[@]}"; do
  libraries=()
  if [ "$target" = fuzz_dns_cares ]; then
    libraries=(-Wl,-Bstatic -lcares -Wl,-Bdynamic)
  fi
  $CXX $CXXFLAGS -std=c++17 -I"$ROOT/client" "$ROOT/fuzz/$target.cc" "${objects[@]}" \
    $LIB_FUZZING_ENGINE "${libraries[@]}" -o "$OUT/$target"
  seeds="$SCRATCH/corpus/$target"
  if [ -d "$ROOT/fuzz/regressions/$target" ]; then
    find "$ROOT/fuzz/regressions/$target" -type f ! -name '*.md' -exec cp {} "$seeds/" \;
  fi
  rm -f "$OUT/${target}_seed_corpus.zip"
  (cd "$seeds" && zip -q "$OUT/${target}_seed_corpus.zip" ./*)
  cp "$ROOT/fuzz/dns.dict" "$OUT/$target.dict"
  cp "$ROOT/fuzz/$target.options" "$OUT/$target.options"
done
echo "build.sh: ${targets[*]} in $OUT"
