#!/usr/bin/env bash
# Builds the feedd container image from the repository's Containerfile,
# offline: no base image is pulled (the Containerfile starts FROM scratch).
#
#   deploy/image/build.sh [TAG]        (default localhost/feedd:dev)
#
# It builds the static binary (CGO_ENABLED=0; GOOS/GOARCH from the
# environment, so GOARCH=arm64 makes an arm64 image), gathers the CA
# bundle and the time zone data of this machine (CA_BUNDLE and ZONEINFO_DIR
# override where from) and a passwd/group naming uid/gid 65532, into a
# context directory, and runs `buildah build` on it. BUILDAH is the buildah
# command with its global flags, e.g.
#   BUILDAH="buildah --root /tmp/x/root --runroot /tmp/x/run --storage-driver vfs"
# (what .ci/image.sh uses); it may be `podman` too, whose `build` builds the
# same. KEEP_CONTEXT=DIR writes the context to DIR and keeps it.
set -euo pipefail
cd "$(dirname "$0")/../.."

tag=${1:-localhost/feedd:dev}
buildah=${BUILDAH:-buildah}
ca=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
zoneinfo=${ZONEINFO_DIR:-/usr/share/zoneinfo}
for f in "$ca" "$zoneinfo/UTC"; do
  if [ ! -e "$f" ]; then
    echo "build.sh: $f is missing: install Debian's ca-certificates and tzdata (apt-get install -y ca-certificates tzdata) or set CA_BUNDLE / ZONEINFO_DIR" >&2
    exit 1
  fi
done

if [ -n "${KEEP_CONTEXT:-}" ]; then
  ctx=$KEEP_CONTEXT
  mkdir -p "$ctx"
else
  ctx=$(mktemp -d)
  trap 'rm -rf "$ctx"' EXIT
fi

# -trimpath and -s -w: no build paths and no symbol tables in the image
# (stack traces keep their function names and lines); the module version
# and commit stay readable (`feedd version`).
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$ctx/feedd" ./cmd/feedd

mkdir -p "$ctx/etc/ssl/certs" "$ctx/usr/share"
cp "$ca" "$ctx/etc/ssl/certs/ca-certificates.crt"
# -L: the image has no /etc/alternatives or the like for links to point to.
cp -RL "$zoneinfo" "$ctx/usr/share/zoneinfo"
# A name for uid 65532, so tools that map uids (ps, id) print one; feedd
# itself needs none.
echo 'nonroot:x:65532:65532:feedd:/nonexistent:/sbin/nologin' >"$ctx/etc/passwd"
echo 'nonroot:x:65532:' >"$ctx/etc/group"
# Owned by root and readable by all: uid 65532 reads everything, writes
# nothing, read-only root or not.
chmod -R u=rwX,go=rX "$ctx/etc" "$ctx/usr"
chmod 0755 "$ctx/feedd"

revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
version=$("$ctx/feedd" version)
# --timestamp 0: the same sources give the same image digest.
$buildah build --isolation chroot --timestamp 0 \
  --label org.opencontainers.image.title=feedd \
  --label org.opencontainers.image.revision="$revision" \
  --label org.opencontainers.image.description="$version" \
  -f "$PWD/Containerfile" -t "$tag" "$ctx"
