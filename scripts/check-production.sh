#!/usr/bin/env bash
# Checks the container image without a container runtime: performs the Dockerfile's stages in temporary folders, as
# the image build would, and runs the result as the container would.
#
#   1. the Dockerfile's runtime stage copies exactly RUNTIME_FILES below (nothing more, nothing less);
#   2. build stage: the build context (git's files filtered by .dockerignore) in a clean folder, its RUN commands
#      (`npm ci`, `npm run build`);
#   3. runtime stage: RUNTIME_FILES alone in another clean folder, its `npm ci` (production dependencies only; none of
#      the development tools may be there);
#   4. its CMD in the image's environment (ENV) plus PGlite in a temporary DATA_DIR, a free port and a first
#      administrator; the HEALTHCHECK command until it passes; a sign-in and a signed-in request; SIGTERM, and a clean
#      exit (code 0) within STOP_SECONDS.
#
# The build stage's `npm ci` is replaced by the repository's node_modules when there is one (CI has just installed
# it); FRESH_BUILD=1 installs there too. The runtime folder always installs on its own, from npm's cache when it can.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$(pwd)"

# What the runtime stage takes from the build stage, as paths under its WORKDIR.
RUNTIME_FILES=(package.json package-lock.json dist console/dist drizzle)
READY_SECONDS=180  # a hang guard, not a speed check: a first start creates its PGlite database
STOP_SECONDS=30    # SIGTERM must end the process well within this (the service itself gives requests 10 s)

WORK="$(mktemp -d "${TMPDIR:-/tmp}/pms-production-XXXXXX")"
SERVICE_PID=""
cleanup() {
  local status=$?
  if [[ -n "$SERVICE_PID" ]] && kill -0 "$SERVICE_PID" 2>/dev/null; then kill -KILL "$SERVICE_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
  exit "$status"
}
trap cleanup EXIT

fail() {
  printf 'check-production: FAILED: %s\n' "$*" >&2
  exit 1
}
step() { printf '\n--- %s\n' "$*"; }
image() { node "$ROOT/scripts/production-image.mjs" "$@"; }
# NUL-separated output of a command into the named array (through a file: process substitution would hide a failure).
read_nul() {
  local -n into=$1
  shift
  "$@" >"$WORK/list" || exit 1
  mapfile -d '' -t into <"$WORK/list"
}

BUILD="$WORK/build"
APP="$WORK/app"
mkdir -p "$BUILD" "$APP" "$WORK/data"

step "the Dockerfile's runtime stage copies what this check copies"
copied="$(image copies)" || exit 1
expected="$(printf '%s\n' "${RUNTIME_FILES[@]}" | sort)"
actual="$(sort <<<"$copied")"
if [[ "$actual" != "$expected" ]]; then
  fail "the runtime stage's COPY lines and this script's RUNTIME_FILES disagree:
$(diff <(echo "$expected") <(echo "$actual") | sed -n 's/^</  only in RUNTIME_FILES:/p; s/^>/  only in the Dockerfile:/p')"
fi
echo "${RUNTIME_FILES[*]}"

step "build stage (in $BUILD)"
image context | tar --null --files-from=- -cf - | tar -xf - -C "$BUILD"
read_nul BUILD_RUNS image runs build
for run in "${BUILD_RUNS[@]}"; do
  if [[ "$run" == "npm ci"* && -z "${FRESH_BUILD:-}" && -d "$ROOT/node_modules" ]]; then
    echo "\$ $run  (the repository's node_modules instead)"
    ln -s "$(realpath "$ROOT/node_modules")" "$BUILD/node_modules"
    continue
  fi
  echo "\$ $run"
  (cd "$BUILD" && bash -c "$run")
done
for path in "${RUNTIME_FILES[@]}"; do [[ -e "$BUILD/$path" ]] || fail "the build stage made no $path"; done

step "runtime stage (in $APP)"
for path in "${RUNTIME_FILES[@]}"; do
  mkdir -p "$APP/$(dirname "$path")"
  cp -R "$BUILD/$path" "$APP/$path"
done
read_nul RUNTIME_RUNS image runs runtime
for run in "${RUNTIME_RUNS[@]}"; do
  if [[ "$run" != npm\ * ]]; then
    echo "\$ $run  (skipped: the container's own set-up)"
    continue
  fi
  echo "\$ $run"
  # From npm's cache where it has the packages (CI's install has just filled it); the network otherwise.
  (cd "$APP" && npm_config_prefer_offline=true bash -c "$run")
done
[[ ! -e "$APP/src" ]] || fail "the runtime folder has the TypeScript sources"
image dev-only >"$WORK/list" || exit 1
present=()
while read -r name; do
  if [[ -e "$APP/node_modules/$name" ]]; then present+=("$name"); fi
done <"$WORK/list"
((${#present[@]} == 0)) || fail "the production install holds development dependencies: ${present[*]}"
echo "production dependencies only ($(cd "$APP" && node -p 'Object.keys(require("./node_modules/.package-lock.json").packages).length') packages), no development tool"

step "the image's command, its health check, a signed-in request, SIGTERM"
read_nul CMD image cmd
read_nul HEALTHCHECK image healthcheck
image env >"$WORK/list" || exit 1
mapfile -t IMAGE_ENV <"$WORK/list"
PORT="$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')"
ADMIN_EMAIL="admin@example.com"
ADMIN_PASSWORD="Pw-1$(node -e 'console.log(require("crypto").randomBytes(18).toString("base64url"))')"
# A clean environment, as in a container: the image's ENV, then what an operator would set.
RUN_ENV=(
  PATH="$PATH" HOME="$WORK"
  "${IMAGE_ENV[@]}"
  DATA_DIR="$WORK/data" PORT="$PORT" HOST=127.0.0.1 BASE_URL="http://127.0.0.1:$PORT" LOG_LEVEL=info
  AUTH_SECRET="$(node -e 'console.log(require("crypto").randomBytes(32).toString("hex"))')"
  ADMIN_EMAIL="$ADMIN_EMAIL" ADMIN_PASSWORD="$ADMIN_PASSWORD"
)
echo "\$ ${CMD[*]}  (PGlite in a temporary DATA_DIR, port $PORT)"
(cd "$APP" && exec env -i "${RUN_ENV[@]}" "${CMD[@]}") >"$WORK/service.log" 2>&1 &
SERVICE_PID=$!

log() { echo "--- the service's log:"; cat "$WORK/service.log"; }
deadline=$((SECONDS + READY_SECONDS))
until (cd "$APP" && env -i "${RUN_ENV[@]}" "${HEALTHCHECK[@]}"); do
  kill -0 "$SERVICE_PID" 2>/dev/null || { log; fail "the service exited before it was ready"; }
  ((SECONDS < deadline)) || { log; fail "the HEALTHCHECK command did not pass within $READY_SECONDS s"; }
  sleep 0.5
done
echo "HEALTHCHECK passed: ready"
image sign-in "http://127.0.0.1:$PORT" "$ADMIN_EMAIL" "$ADMIN_PASSWORD" || { log; fail "the signed-in request failed"; }

kill -TERM "$SERVICE_PID"
deadline=$((SECONDS + STOP_SECONDS))
while kill -0 "$SERVICE_PID" 2>/dev/null; do
  ((SECONDS < deadline)) || { log; fail "still running $STOP_SECONDS s after SIGTERM"; }
  sleep 0.2
done
code=0
wait "$SERVICE_PID" || code=$?
SERVICE_PID=""
((code == 0)) || { log; fail "exit code $code after SIGTERM (expected 0)"; }
grep -q '"shutting down"' "$WORK/service.log" || { log; fail "no shutdown in the log after SIGTERM"; }
echo "SIGTERM: exit code 0"

step "production image check passed"
