#!/usr/bin/env bash
# CI: feedd's subscriptions with real clients (called from .ci/run; runs
# alone too). Builds feedd, serves the demo data (embedded store, dev auth)
# on a free loopback port, waits for /readyz, and runs
# examples/realtime/check.mjs: graphql-ws, graphql-sse (distinct
# connections), Apollo Client's GraphQLWsLink and the README's example
# (subscribe.mjs) each subscribe to followingFeedUpdates, are told of a
# post by an account the viewer follows (newPostCount 1) and of its
# deletion (deletedPostIds), and liveFeedUpdates sees a session scheduled,
# started and ended. First, the README's example must be subscribe.mjs word
# for word. Skipped, with a note, when node or npm is missing (as
# .ci/clients.sh does). Quiet but for the check's lines; on failure prints
# feedd's log too.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v go >/dev/null 2>&1; then
  export PATH="$PATH:/usr/local/go/bin"
fi

# The README's example is examples/realtime/subscribe.mjs, which the check
# runs: the first js block of the README's "Realtime" section must be that
# file, word for word.
readme_example=$(awk '/^## Realtime/ { on = 1 } on && /^```js$/ { inside = 1; next } inside && /^```$/ { exit } inside { print }' README.md)
if [ "$readme_example" != "$(cat examples/realtime/subscribe.mjs)" ]; then
  diff <(printf '%s\n' "$readme_example") examples/realtime/subscribe.mjs >&2 || true
  echo "realtime.sh: the README's Realtime example differs from examples/realtime/subscribe.mjs: make them the same" >&2
  exit 1
fi

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "note: node/npm not found; skipped the realtime clients check" >&2
  exit 0
fi

work=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "realtime.sh: $*" >&2
  echo "--- feedd's log" >&2
  tail -n 50 "$work/feedd.log" >&2 || true
  exit 1
}

(cd examples/realtime && npm ci --silent --no-audit --no-fund >"$work/npm.log" 2>&1) || { cat "$work/npm.log" >&2; fail "npm ci failed"; }
go build -o "$work/feedd" ./cmd/feedd
# A free port on the loopback interface, chosen by the kernel.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
"$work/feedd" --addr "127.0.0.1:$port" --log-level warn >"$work/feedd.log" 2>&1 &
pid=$!
ready=""
for _ in $(seq 1 300); do
  if curl -fs -o /dev/null "http://127.0.0.1:$port/readyz"; then ready=1; break; fi
  kill -0 "$pid" 2>/dev/null || fail "feedd exited before it was ready"
  sleep 0.1
done
[ -n "$ready" ] || fail "feedd not ready after 30s"

FEEDD_URL="http://127.0.0.1:$port/query" node examples/realtime/check.mjs || fail "the realtime clients check failed"
