#!/usr/bin/env bash
# The Helm chart (deploy/helm/feedd): helm lint and helm template with the
# default values, the production set (ci/production-values.yaml) and every
# optional path (ci/options-values.yaml); the renderings checked strictly
# against the Kubernetes API types by deploy/chartcheck (its own module:
# vetted, tested, tidy); values the chart must refuse, each with its
# message; and every flag of feedd serve and feedd worker named in
# values.yaml, so none is out of the operator's reach.
#
# Helm is pinned and built from the Go module proxy with go run, outside
# feedd's go.mod. Its first build takes a few minutes (4m51s on this shared
# machine, downloads included); later runs reuse the build cache.
set -euo pipefail
cd "$(dirname "$0")/.."

HELM_VERSION=v3.19.0
# The Kubernetes version the chart is rendered for: a helm built with go run
# carries no Kubernetes version of its own (it would say v1.20.0, older
# than the chart's kubeVersion).
KUBE_VERSION=1.34.0
chart=deploy/helm/feedd
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

helm() { go run "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" "$@"; }

start=$(date +%s)
helm version --short
echo "helm $HELM_VERSION ready in $(($(date +%s) - start))s"

renders=(default production options)
for name in "${renders[@]}"; do
  values=()
  if [ "$name" != default ]; then
    values=(-f "$chart/ci/$name-values.yaml")
  fi
  echo "-- helm lint, $name values"
  helm lint --strict --kube-version "$KUBE_VERSION" "$chart" "${values[@]}"
  echo "-- helm template, $name values"
  helm template feedd "$chart" --namespace feed --kube-version "$KUBE_VERSION" "${values[@]}" >"$out/$name.yaml"
  echo "$(grep -c '^kind:' "$out/$name.yaml") objects: $(grep '^kind:' "$out/$name.yaml" | sort | uniq -c | awk '{printf "%s%s %s", sep, $1, $3; sep=", "}')"
done

echo "-- chartcheck: tidy, vet, staticcheck, tests, then the renderings"
(
  cd deploy/chartcheck
  go mod tidy -diff
  go vet ./...
  go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
  go test -count=1 ./...
  go build -o "$out/chartcheck" .
)
for name in "${renders[@]}"; do
  "$out/chartcheck" "$out/$name.yaml" | tail -n 1
done

echo "-- rendered values as feedd reads them"
# A large number must not reach feedd as 1e+07.
grep -A1 'name: FEED_INBOX_CAP' "$out/options.yaml" | grep -q 'value: "10000000"' ||
  { echo "options: FEED_INBOX_CAP is not rendered as 10000000" >&2; exit 1; }
# The production set's grace covers the readiness delay and the drain.
grep -q 'terminationGracePeriodSeconds: 40' "$out/production.yaml" ||
  { echo "production: terminationGracePeriodSeconds is not 10+15+15" >&2; exit 1; }
echo ok

echo "-- values the chart refuses"
refused=0
refuse() { # WANT ARGS...: helm template with ARGS must fail, saying WANT
  local want=$1 msg
  shift
  if msg=$(helm template feedd "$chart" --kube-version "$KUBE_VERSION" "$@" 2>&1 >/dev/null); then
    echo "helm template $* rendered; want a refusal saying: $want" >&2
    exit 1
  fi
  if ! grep -qF -- "$want" <<<"$msg"; then
    printf 'helm template %s failed, but not saying %q:\n%s\n' "$*" "$want" "$msg" >&2
    exit 1
  fi
  refused=$((refused + 1))
}
refuse "secrets.existingSecret is empty" --set secrets.jwtSecretKey=jwt-secret
refuse "jwt-secret is set by the chart's own values" --set config.jwt-secret=plaintext
refuse "redis is set by the chart's own values" --set serve.config.redis=redis://other:6379
refuse '"Inbox_Cap" is not a flag name' --set worker.config.Inbox_Cap=10
refuse "must exceed serve.shutdownDelaySeconds + serve.shutdownTimeoutSeconds (15)" --set serve.terminationGracePeriodSeconds=15
refuse "redis.url is empty" --set redis.url=
refuse "give tracing.endpoint" --set tracing.enabled=true
refuse "redis.keyPrefix must not contain { or }" --set-string 'redis.keyPrefix=feed{1}'
refuse "chart requires kubeVersion" --kube-version 1.26.0
echo "$refused refused, each with its message"

echo "-- every flag of feedd serve and feedd worker is named in values.yaml"
go build -o "$out/feedd" ./cmd/feedd
# The flags as -h lists them (its exit status is not relied on; an empty list is).
flags=$(for cmd in serve worker; do { "$out/feedd" "$cmd" -h 2>&1 || true; } | sed -n 's/^  -\([a-z0-9-]*\).*/\1/p'; done | sort -u)
if [ -z "$flags" ]; then
  echo "feedd serve -h and feedd worker -h listed no flag" >&2
  exit 1
fi
missing=()
for f in $flags; do
  grep -qE "(^|[^a-z0-9-])$f([^a-z0-9-]|\$)" "$chart/values.yaml" || missing+=("$f")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "flags not named in $chart/values.yaml: ${missing[*]}: document each (config, serve.config or worker.config, or a value of its own)" >&2
  exit 1
fi
echo "$(wc -w <<<"$flags") flags, all named"
