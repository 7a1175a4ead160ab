#!/usr/bin/env bash
# Refetches the vendored GraphiQL assets in dist/ from the npm registry with
# `npm pack` (which checks each tarball against the registry's integrity
# hash), copies the UMD builds and their licenses, and rewrites
# dist/SHA256SUMS. Run it after changing a version below, then update the
# versions in README.md and commit dist/.
#
#   ./update.sh           refetch and rewrite dist/
#   ./update.sh --check   refetch and fail if dist/ differs from npm
set -euo pipefail
cd "$(dirname "$0")"

GRAPHIQL_VERSION=3.9.0 # the last 3.x: a minified UMD build for React 18
REACT_VERSION=18.3.1   # react and react-dom; React 19 dropped the UMD builds

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent --loglevel=error \
  "graphiql@$GRAPHIQL_VERSION" "react@$REACT_VERSION" "react-dom@$REACT_VERSION" >/dev/null)

out="$tmp/dist"
mkdir -p "$out"
take() { # take PACKAGE VERSION FILE... : copy FILEs (paths inside the tarball) to $out
  local pkg=$1 ver=$2
  shift 2
  mkdir -p "$tmp/$pkg"
  tar -xzf "$tmp/$pkg-$ver.tgz" -C "$tmp/$pkg"
  for f in "$@"; do cp "$tmp/$pkg/package/$f" "$out/"; done
  cp "$tmp/$pkg/package/LICENSE" "$out/LICENSE.$pkg"
}
take graphiql "$GRAPHIQL_VERSION" graphiql.min.js graphiql.min.css
take react "$REACT_VERSION" umd/react.production.min.js
take react-dom "$REACT_VERSION" umd/react-dom.production.min.js
(cd "$out" && sha256sum -- *.js *.css LICENSE.* >SHA256SUMS)

# The page must load nothing from elsewhere: the stylesheet may only use
# data: URLs, and must not @import.
if grep -Eq '@import' "$out/graphiql.min.css" ||
  grep -Eo 'url\([^)]*\)' "$out/graphiql.min.css" | grep -Evq '^url\(["'\'']?data:'; then
  echo "graphiql.min.css refers to an external resource" >&2
  exit 1
fi

if [ "${1:-}" = "--check" ]; then
  diff -r "$out" dist >/dev/null || { echo "dist/ differs from npm; run $0" >&2; exit 1; }
  echo "dist/ matches npm"
  exit 0
fi
rm -f dist/*
cp "$out"/* dist/
echo "dist/ updated: graphiql@$GRAPHIQL_VERSION react@$REACT_VERSION react-dom@$REACT_VERSION"
