#!/usr/bin/env bash
# CI: the GraphQL-over-HTTP conformance audit of graphql-http (the reference
# implementation's suite, pinned in tools/httpaudit/package-lock.json)
# against a feedd serving the embedded store, for both application/json and
# application/graphql-response+json. Fails on any warning or error. Installs
# Debian's Node.js if it is missing. Prints the audit's summary line.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v go >/dev/null 2>&1; then
  export PATH="$PATH:/usr/local/go/bin"
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi

work=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/feedd" ./cmd/feedd
# A free port on the loopback interface, chosen by the kernel.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
"$work/feedd" --addr "127.0.0.1:$port" --log-level warn >"$work/feedd.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  if curl -fs -o /dev/null "http://127.0.0.1:$port/healthz"; then break; fi
  if ! kill -0 "$pid" 2>/dev/null; then cat "$work/feedd.log" >&2; echo "audit.sh: feedd exited" >&2; exit 1; fi
  sleep 0.1
done

(cd tools/httpaudit && npm ci --silent --no-audit --no-fund >/dev/null 2>&1 && FEED_AUDIT_URL="http://127.0.0.1:$port/query" node audit.mjs)
