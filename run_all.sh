#!/usr/bin/env bash
# tlslab's gate: install what is missing (Debian, as root), configure, build, run every
# CTest label, print a summary table, exit nonzero unless every recorded outcome holds.
#
#   ./run_all.sh                 the whole lab
#   ./run_all.sh --label matrix  one stage (repeatable)
#   ./run_all.sh --setup-only    install, configure and build; then `ctest --test-dir build`
#   ./run_all.sh --full          every crossing whole (every matrix row for every client), not sampled
#   ./run_all.sh --client PROFILE   one client under test alone (clients/README.md): its crossed gates;
#                                the first run records its observations (--update), later runs gate on them
#   BUILD_DIR=... JOBS=...       build folder (default ./build), parallel build jobs (default 2)
#   JUnit XML: BUILD_DIR/junit/, one file per gate (a test case per row) and ctest-LABEL.xml per label
set -uo pipefail

cd "$(dirname "$0")"
ROOT=$(pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
JOBS=${JOBS:-2}
LABELS_ALL=(unit client matrix clients faults hostile leaks dns fuzz gaps mutants)
LABELS=()
SETUP_ONLY=0
CLIENT=""

die() { echo "run_all.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case "$1" in
    --label) [ $# -ge 2 ] || die "--label: missing value"; LABELS+=("$2"); shift 2 ;;
    --setup-only) SETUP_ONLY=1; shift ;;
    --full) export TLSLAB_FULL=1; shift ;;
    --client) [ $# -ge 2 ] || die "--client: missing value"; CLIENT=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
LABELS_ALL+=(full)   # the whole crossings: run by --full, or by --label full
if [ ${#LABELS[@]} -eq 0 ]; then
  LABELS=("${LABELS_ALL[@]}")
  [ "${TLSLAB_FULL:-0}" = 1 ] || unset 'LABELS[-1]'
fi
for l in "${LABELS[@]}"; do
  [[ " ${LABELS_ALL[*]} " == *" $l "* ]] || die "--label: unknown label '$l' (one of: ${LABELS_ALL[*]})"
done

# --- set-up: Debian packages --------------------------------------------------------------
PACKAGES=(cmake ninja-build pkg-config clang-14 libclang-rt-14-dev libssl-dev openssl libgtest-dev
          libc-ares-dev libidn2-dev valgrind gdb iproute2 util-linux python3 python3-trustme python3-dnslib
          python3-cryptography gcovr llvm-14   # gcovr: coverage/coverage.py only (gcc's gcov); llvm-14: the sanitizers' llvm-symbolizer
          python3-uvloop libcurl4-openssl-dev libgnutls28-dev golang-go)   # the clients under test
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

# --- configure and build ----------------------------------------------------------------
t0=$(date +%s)
echo "== configure ($BUILD_DIR)"
cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTLSLAB_FOLDERS="certs;client;servers;shims;hostile;clients;proxy;matrix;fuzz;gaps;mutants;bench" >"$BUILD_DIR.configure.log" 2>&1 ||
  { tail -30 "$BUILD_DIR.configure.log"; die "cmake configure failed"; }
echo "== build (-j$JOBS)"
cmake --build "$BUILD_DIR" -j "$JOBS" >"$BUILD_DIR.build.log" 2>&1 ||
  { grep -E "error|FAILED" "$BUILD_DIR.build.log" | head -30; die "build failed (see $BUILD_DIR.build.log)"; }
echo "   built in $(( $(date +%s) - t0 )) s"
[ "$SETUP_ONLY" -eq 1 ] && { echo "set-up done: ctest --test-dir $BUILD_DIR --output-on-failure"; exit 0; }

# --- one client under test, alone: its crossed gates (the lab's code is not touched) ------------
if [ -n "$CLIENT" ]; then
  exec /usr/bin/python3 "$ROOT/clients/cross.py" --client "$CLIENT" --build-dir "$BUILD_DIR"
fi

# --- every label, one after the other (timing-sensitive gates get the machine to themselves) ---
export TLSLAB_JUNIT_DIR=${TLSLAB_JUNIT_DIR:-$BUILD_DIR/junit}   # every gate writes its rows there (harness/junit.py)
mkdir -p "$TLSLAB_JUNIT_DIR"
declare -A RESULT SECONDS_OF COUNTS
failed_labels=0
total_pass=0
total_fail=0
for label in "${LABELS[@]}"; do
  echo "== ctest -L $label"
  start=$(date +%s)
  log="$BUILD_DIR/ctest-$label.log"
  jobs=1
  # units, fuzzers and oracles are bounded by count, not time: they share the cores. In the clients
  # label the gates that keep the cores busy (leaks, sweeps, matrices: ALONE in their CMakeLists.txt,
  # CTest's RUN_SERIAL) run alone, and the gates that mostly wait (faults_*, hostile_*) two at a time:
  # beside a leak gate, faults_asyncio's SilentPeer once measured 271 ms of CPU against its bound of 250.
  case "$label" in unit|fuzz|clients) jobs=$JOBS ;; esac
  ctest --test-dir "$BUILD_DIR" -L "^${label}\$" -j "$jobs" --output-on-failure --no-tests=error \
    --output-junit "$TLSLAB_JUNIT_DIR/ctest-$label.xml" >"$log" 2>&1
  rc=$?
  SECONDS_OF[$label]=$(( $(date +%s) - start ))
  # ctest's own tally: "N% tests passed, M tests failed out of T"
  read -r fail all < <(sed -nE 's/.*tests passed, ([0-9]+) tests? failed out of ([0-9]+).*/\1 \2/p' "$log" | tail -1)
  fail=${fail:-0}
  pass=$(( ${all:-0} - fail ))
  COUNTS[$label]="$pass/$((pass + fail))"
  total_pass=$((total_pass + pass))
  total_fail=$((total_fail + fail))
  if [ $rc -eq 0 ]; then
    RESULT[$label]=PASS
  else
    RESULT[$label]=FAIL
    failed_labels=$((failed_labels + 1))
    [ "$fail" -eq 0 ] && total_fail=$((total_fail + 1))  # no test ran: the label itself failed
    grep -E '^(FAIL|PASS|SKIP)|passed, .* failed|Test +#|Error|error' "$log" | grep -v '^PASS' | tail -25
  fi
  echo "   ${RESULT[$label]} in ${SECONDS_OF[$label]} s (tests ${COUNTS[$label]}; log $log)"
done

echo
echo "tlslab summary"
printf '  %-8s %-6s %-7s %s\n' label result tests seconds
for label in "${LABELS[@]}"; do
  printf '  %-8s %-6s %-7s %s\n' "$label" "${RESULT[$label]}" "${COUNTS[$label]}" "${SECONDS_OF[$label]}"
done
echo "  total wall: $(( $(date +%s) - t0 )) s"
echo "tlslab: $total_pass passed, $total_fail failed"
[ "$failed_labels" -eq 0 ]
