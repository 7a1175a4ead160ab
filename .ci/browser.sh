#!/usr/bin/env bash
# CI: prove GraphiQL works with no internet. Installs Debian's Chromium if
# it is missing, then runs the headless-browser tests of e2e/browser with
# FEED_BROWSER_TEST=1: the page at / is loaded from the binary's embedded
# assets, runs followingFeed, shows the result, and no request leaves the
# host. Safe to run again; quiet unless something fails.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v go >/dev/null 2>&1; then
  export PATH="$PATH:/usr/local/go/bin"
fi

# FEED_CHROMIUM names another browser binary; by default Debian's package.
chromium=${FEED_CHROMIUM:-/usr/bin/chromium}
if [ -z "${FEED_CHROMIUM:-}" ] && [ ! -x "$chromium" ]; then
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "browser.sh: could not install chromium" >&2
    exit 1
  fi
fi

FEED_BROWSER_TEST=1 FEED_CHROMIUM="$chromium" go test -count=1 "$@" ./e2e/browser/
