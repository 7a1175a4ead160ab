#!/usr/bin/env bash
# CI for the schema's consumers (called from .ci/run; runs alone too):
#  1. the typed Go client (client/generated.go) is what genqlient makes of
#     schema.graphqls and client/operations today;
#  2. schema.graphqls breaks no client of the released schema
#     (schema.lock.graphqls), unless FEED_ALLOW_BREAKING=1;
#  3. the TypeScript example generates and type-checks against the schema
#     (skipped, with a note, when node or npm is missing).
# Quiet on success; on failure prints what failed and how to fix it.
# Idempotent: it rewrites generated files only with what is committed.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v go >/dev/null 2>&1; then
  export PATH="$PATH:/usr/local/go/bin"
fi

# quietly runs a command, showing its output only when it fails.
quietly() {
  local out
  if ! out=$("$@" 2>&1); then
    printf '%s\n' "$out" >&2
    echo "failed: $*" >&2
    return 1
  fi
}

# 1. Typed Go client: regenerate, and fail if that changed the output.
before=$(mktemp)
trap 'rm -f "$before"' EXIT
cp client/generated.go "$before"
quietly go run github.com/Khan/genqlient
if ! cmp -s "$before" client/generated.go; then
  diff -u "$before" client/generated.go | head -40 >&2 || true
  echo "client/generated.go was stale (regenerated now): run 'go run github.com/Khan/genqlient' and commit it" >&2
  exit 1
fi

# 2. Breaking changes against the released schema (prints them when any).
go run ./tools/schemacheck -q

# 3. TypeScript example.
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  (
    cd examples/typescript
    quietly npm ci --no-audit --no-fund
    quietly npm run --silent check
  )
else
  echo "note: node/npm not found; skipped the TypeScript client example" >&2
fi
