#!/usr/bin/env bash
# The image smoke test: builds the feedd image (deploy/image/build.sh, with
# buildah from Debian's packages, in a storage of its own that it deletes
# after), unpacks its file system from an OCI layout of it, and runs the
# binary from it as the image's user (chroot --userspec=65532:65532), on
# the image's root mounted read-only: `feedd import --drain` loads two users
# and a post into the local Redis under a key prefix of its own, `feedd
# serve` answers a signed-in followingFeed query with that post and 200 on
# its ops listener's /readyz and /healthz, `feedd worker` gets ready and
# stops on SIGTERM, `feedd export` writes the post back; then the prefix's
# keys are deleted. Prints the image's size, compressed and unpacked.
#
#   .ci/image.sh          (needs root and Redis at 127.0.0.1:6379; REDIS_URL overrides)
set -euo pipefail
cd "$(dirname "$0")/.."

redis=${REDIS_URL:-redis://127.0.0.1:6379}
redis_host=$(echo "$redis" | sed -E 's#^redis://([^:/]+).*#\1#')
redis_port=$(echo "$redis" | sed -E 's#^redis://[^:/]+:([0-9]+).*#\1#')
uid=65532
fail() { echo "image smoke test: $*" >&2; exit 1; }

# What the build and the test need, from Debian's packages when missing.
need=()
command -v buildah >/dev/null 2>&1 || need+=(buildah)
command -v jq >/dev/null 2>&1 || need+=(jq)
command -v curl >/dev/null 2>&1 || need+=(curl)
[ -f /etc/ssl/certs/ca-certificates.crt ] || need+=(ca-certificates)
[ -f /usr/share/zoneinfo/UTC ] || need+=(tzdata)
if [ "${#need[@]}" -gt 0 ]; then
  echo "installing ${need[*]} (Debian's packages)"
  if ! { apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null; }; then
    fail "could not install ${need[*]} with apt-get: the image cannot be built and tested here (buildah comes from Debian: apt-get install -y buildah)"
  fi
fi
for tool in redis-cli unshare chroot; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool is missing (redis-tools, util-linux, coreutils)"
done
redis-cli -h "$redis_host" -p "$redis_port" ping >/dev/null || fail "no Redis answers at $redis"

work=$(mktemp -d /tmp/feedd-image.XXXXXX)
prefix="ci-image-$$-$(date +%s):"
pids=()
cleanup() {
  local status=$?
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  redis-cli -h "$redis_host" -p "$redis_port" --scan --pattern "${prefix}*" |
    xargs -r -d '\n' -n 100 redis-cli -h "$redis_host" -p "$redis_port" del >/dev/null || true
  if [ "$status" -ne 0 ]; then
    for f in "$work"/*.log; do [ -e "$f" ] && { echo "--- $f"; tail -n 30 "$f"; }; done
  fi
  # vfs layers are plain directories: removing the storage removes all.
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

# A storage of its own: vfs (no overlay mounts needed) under $work, so the
# machine's image store is left alone and nothing stays behind.
export BUILDAH="buildah --root $work/storage --runroot $work/run --storage-driver vfs"
tag=localhost/feedd:smoke
start=$(date +%s)
deploy/image/build.sh "$tag" >"$work/build.log" 2>&1 || fail "build failed (deploy/image/build.sh), see $work/build.log above"
echo "built $tag in $(($(date +%s) - start))s"

# Unpack: the OCI layout's manifest lists the layers, applied in order.
$BUILDAH push "$tag" "oci:$work/oci" >"$work/push.log" 2>&1 || fail "buildah push to an OCI layout failed"
blobs=$work/oci/blobs/sha256
manifest=$blobs/$(jq -r '.manifests[0].digest | sub("sha256:"; "")' "$work/oci/index.json")
# The image's own configuration, as a runtime reads it.
config=$(jq .config "$blobs/$(jq -r '.config.digest | sub("sha256:"; "")' "$manifest")")
[ "$(echo "$config" | jq -r .User)" = "$uid:$uid" ] || fail "image user is $(echo "$config" | jq -r .User), want $uid:$uid"
echo "config: user $(echo "$config" | jq -r .User), entrypoint $(echo "$config" | jq -c .Entrypoint), cmd $(echo "$config" | jq -c .Cmd)"
root=$work/rootfs
mkdir -p "$root"
for layer in $(jq -r '.layers[].digest | sub("sha256:"; "")' "$manifest"); do
  tar -xf "$blobs/$layer" -C "$root"
done
compressed=$(jq '[.layers[].size, .config.size] | add' "$manifest")
unpacked=$(du -sb "$root" | cut -f1)
binary=$(stat -c %s "$root/usr/local/bin/feedd")
echo "image size: $((compressed / 1024)) KiB compressed ($(jq '.layers | length' "$manifest") layer), $((unpacked / 1024)) KiB unpacked, of which the feedd binary $((binary / 1024)) KiB"
for f in /usr/local/bin/feedd /etc/ssl/certs/ca-certificates.crt /usr/share/zoneinfo/Europe/Berlin /etc/passwd; do
  [ -f "$root$f" ] || fail "$f is not in the image"
done
for f in /bin/sh /bin/busybox /usr/bin/env; do
  [ ! -e "$root$f" ] || fail "$f is in the image: it must have no shell"
done

# feedd ARGS... runs the image's binary as its user on its root mounted
# read-only (a private mount namespace: the mount goes with the process).
# Each step execs the next, so a background `feedd serve &`'s $! is
# feedd's own pid, the one to signal.
feedd() { (feedd_exec "$@"); }
feedd_exec() {
  exec unshare --mount --propagation private sh -c '
    root=$1; shift
    mount --bind "$root" "$root" && mount -o remount,bind,ro "$root" && exec chroot --userspec='"$uid:$uid"' "$root" /usr/local/bin/feedd "$@"' \
    sh "$root" "$@"
}
# waitfor FILE PATTERN: the first match of the sed -E PATTERN's group in
# FILE, waiting up to 30 s for it to appear.
waitfor() {
  local v
  for _ in $(seq 1 300); do
    v=$(sed -nE "s#$2#\\1#p" "$1" | head -n 1)
    [ -n "$v" ] && { echo "$v"; return; }
    sleep 0.1
  done
  fail "nothing like /$2/ in $1 after 30s"
}
store=(--redis "$redis" --key-prefix "$prefix")
secret=image-smoke-test-secret-0123456789abcdef

feedd version
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
printf '%s\n' \
  '{"type":"user","id":"1","handle":"ann"}' \
  '{"type":"user","id":"2","handle":"bob"}' \
  '{"type":"follow","follower":"2","followee":"1"}' \
  "{\"type\":\"post\",\"id\":\"10\",\"author\":\"1\",\"text\":\"hello from the image\",\"createdAt\":\"$now\"}" |
  feedd import "${store[@]}" --drain - >"$work/import.log" 2>&1 || fail "feedd import failed"
echo "import: $(tail -n 1 "$work/import.log")"

feedd_exec serve "${store[@]}" --jwt-secret "$secret" --addr 127.0.0.1:0 --ops-addr 127.0.0.1:0 --shutdown-delay 3s \
  >"$work/serve.log" 2>&1 &
serve=$!
pids+=("$serve")
api=$(waitfor "$work/serve.log" '.*GraphQL +http://([^ ]+)/query.*')
ops=$(waitfor "$work/serve.log" '.*operations endpoints.* addr=([0-9.:]+).*')
token=$(feedd token --user 2 --jwt-secret "$secret")
answer=$(curl -fsS "http://$api/query" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
  -d '{"query":"{ followingFeed(first: 5) { edges { node { text author { handle } } } } }"}')
echo "serve: followingFeed as bob: $answer"
[ "$(echo "$answer" | jq -r '.data.followingFeed.edges[0].node.text')" = "hello from the image" ] ||
  fail "followingFeed did not answer ann's post"
for path in /readyz /healthz; do
  code=$(curl -s -o "$work/ops.out" -w '%{http_code}' "http://$ops$path")
  echo "serve: $path $code $(head -c 200 "$work/ops.out")"
  [ "$code" = 200 ] || fail "$path answered $code"
done

feedd_exec worker "${store[@]}" --ops-addr 127.0.0.1:0 >"$work/worker.log" 2>&1 &
worker=$!
pids+=("$worker")
wops=$(waitfor "$work/worker.log" '.*operations endpoints.* addr=([0-9.:]+).*')
code=$(curl -s -o /dev/null -w '%{http_code}' "http://$wops/readyz")
echo "worker: /readyz $code"
[ "$code" = 200 ] || fail "the worker's /readyz answered $code"

feedd export "${store[@]}" - >"$work/export.jsonl" 2>"$work/export.log" || fail "feedd export failed"
grep -q '"hello from the image"' "$work/export.jsonl" || fail "the export has no post"
echo "export: $(wc -l <"$work/export.jsonl") lines, the post among them"

for p in "$serve" "$worker"; do kill -TERM "$p"; done
# --shutdown-delay: unready at once, still serving until the delay ends.
for _ in $(seq 1 20); do
  code=$(curl -s -o "$work/ops.out" -w '%{http_code}' "http://$ops/readyz" || true)
  [ "$code" = 503 ] && break
  sleep 0.1
done
echo "serve after SIGTERM: /readyz $code $(head -c 200 "$work/ops.out")"
[ "$code" = 503 ] || fail "/readyz answered $code after SIGTERM, want 503 during --shutdown-delay"
wait "$serve" || fail "feedd serve exited with status $? on SIGTERM"
wait "$worker" || fail "feedd worker exited with status $? on SIGTERM"
pids=()
echo "serve and worker exited 0 on SIGTERM"
echo "image smoke test passed in $(($(date +%s) - start))s"
