#!/usr/bin/env bash
# tlslab's gate: install what is missing (Debian, as root), configure, build, run every CTest
# label (harness/lab_gate.py: one CTest run, the labels side by side), print a summary table,
# exit nonzero unless every recorded outcome holds.
#
#   ./run_all.sh                 the whole lab (every label but full)
#   ./run_all.sh --label matrix  one stage (repeatable; the labels are CTest's:
#                                /usr/bin/python3 -m harness.lab_gate --build-dir build --list-labels)
#   ./run_all.sh --setup-only    install, configure and build; then `ctest --test-dir build`
#   ./run_all.sh --full          every crossing whole (label full too: every matrix row for every client)
#   ./run_all.sh --stress N [--stress-cores K]   the gate N times beside K CPU hogs (stress-ng --cpu K,
#                                default 1), then every test that failed in any run, with its count
#   ./run_all.sh --profile       after the run, the slowest tests, the tests by CPU-seconds, the slowest rows
#   ./run_all.sh --full --label clients --label full --tests '_go$'
#                                every crossing over one client under test, uncut (CTest's -R; --exclude is -E)
#   ./run_all.sh --client PROFILE   one client under test alone (clients/README.md): its crossed gates;
#                                the first run records its observations (--update), later runs gate on them
#   BUILD_DIR=... JOBS=...       build folder (default ./build), parallel build jobs (default 2)
#   JUnit XML: BUILD_DIR/junit/, one file per gate (a test case per row) and CTest's ctest.xml
set -uo pipefail

cd "$(dirname "$0")"
ROOT=$(pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
JOBS=${JOBS:-2}
SETUP_ONLY=0
CLIENT=""
GATE_ARGS=()

die() { echo "run_all.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case "$1" in
    --label) [ $# -ge 2 ] || die "$1: missing value"; GATE_ARGS+=("$1" "$2"); shift 2 ;;
    --stress|--stress-cores) [ $# -ge 2 ] || die "$1: missing value"
      [[ $2 =~ ^[0-9]+$ && $((10#$2)) -ge 1 ]] || die "$1: '$2' is not a whole number of at least 1"
      GATE_ARGS+=("$1" "$2"); shift 2 ;;
    --full|--profile|--exclude-clients) GATE_ARGS+=("$1"); shift ;;
    --tests|--exclude) [ $# -ge 2 ] || die "$1: missing value"; GATE_ARGS+=("$1" "$2"); shift 2 ;;
    --setup-only) SETUP_ONLY=1; shift ;;
    --client) [ $# -ge 2 ] || die "--client: missing value"; CLIENT=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
case " ${GATE_ARGS[*]} " in *" --stress-cores "*) case " ${GATE_ARGS[*]} " in *" --stress "*) ;;
  *) die "--stress-cores K: only with --stress N" ;; esac ;; esac

# --- set-up: Debian packages --------------------------------------------------------------
PACKAGES=(cmake ninja-build pkg-config clang-14 libclang-rt-14-dev libssl-dev openssl libgtest-dev
          libc-ares-dev libidn2-dev valgrind gdb iproute2 util-linux python3 python3-trustme python3-dnslib
          python3-cryptography python3-cryptography-vectors python3-yaml stress-ng strace   # -vectors: NIST's PKITS (pkits/); strace: the loop counted for Go (harness/loop.py)
          gcovr llvm-14   # gcovr: coverage/coverage.py only (gcc's gcov); llvm-14: the sanitizers' llvm-symbolizer
          python3-uvloop libcurl4-openssl-dev libgnutls28-dev golang-go nodejs libmbedtls-dev libwolfssl-dev libboost-dev android-libboringssl-dev libbotan-2-dev libbearssl-dev libnss3-dev libnspr4-dev libnss3-tools)   # the clients under test
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || die "missing Debian packages (${missing[*]}); run as root or install them"
  echo "== installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q "${missing[@]}" >/tmp/tlslab-apt.log 2>&1 ||
    { apt-get update -q >>/tmp/tlslab-apt.log 2>&1 && apt-get install -y -q "${missing[@]}" >>/tmp/tlslab-apt.log 2>&1; } ||
    die "apt-get install failed (see /tmp/tlslab-apt.log)"
fi

# --- set-up: npm packages (the clients bun/ and deno/: exact versions, no install scripts, a fixed prefix) ---
NPM_PREFIX=/opt/tlslab-npm
NPM_PACKAGES=("@oven/bun-linux-x64@1.4.5" "@deno/linux-x64-glibc@2.9.6")   # the clients under test bun/ and deno/
if [ ! -x "$NPM_PREFIX/node_modules/@oven/bun-linux-x64/bin/bun" ] || [ ! -x "$NPM_PREFIX/node_modules/@deno/linux-x64-glibc/deno" ]; then
  echo "== installing (npm, $NPM_PREFIX): ${NPM_PACKAGES[*]}"
  npm install --prefix "$NPM_PREFIX" --no-save --ignore-scripts --no-audit --no-fund "${NPM_PACKAGES[@]}" >/tmp/tlslab-npm.log 2>&1 ||
    die "npm install failed (see /tmp/tlslab-npm.log)"
fi

# --- configure and build ----------------------------------------------------------------
t0=$(date +%s)
echo "== configure ($BUILD_DIR)"
cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$BUILD_DIR.configure.log" 2>&1 ||
  { tail -30 "$BUILD_DIR.configure.log"; die "cmake configure failed"; }
echo "== build (-j$JOBS)"
cmake --build "$BUILD_DIR" -j "$JOBS" >"$BUILD_DIR.build.log" 2>&1 ||
  { grep -E "error|FAILED" "$BUILD_DIR.build.log" | head -30; die "build failed (see $BUILD_DIR.build.log)"; }
echo "   built in $(( $(date +%s) - t0 )) s"
[ "$SETUP_ONLY" -eq 1 ] && { echo "set-up done: ctest --test-dir $BUILD_DIR -LE \"^full\$\" -j4 --output-on-failure"; exit 0; }

# --- one client under test, alone: its crossed gates (the lab's code is not touched) ------------
if [ -n "$CLIENT" ]; then
  exec /usr/bin/python3 "$ROOT/clients/cross.py" --client "$CLIENT" --build-dir "$BUILD_DIR"
fi

# --- the labels, side by side (the logic is Python's: harness/lab_gate.py) ---------------------
/usr/bin/python3 -m harness.lab_gate --build-dir "$BUILD_DIR" "${GATE_ARGS[@]}"
rc=$?
echo "   total wall, build included: $(( $(date +%s) - t0 )) s"
exit $rc
