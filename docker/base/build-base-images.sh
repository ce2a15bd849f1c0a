#!/usr/bin/env bash
# Builds local stand-ins for the two base images docker/ names, for a machine that reaches no
# container registry (only Debian's packages and the npm registry): a Debian bookworm minbase
# root filesystem (debootstrap, on the host), then
#   node:20-bookworm-slim = that rootfs + this machine's Node.js 20 and npm + a `node` user (uid 1000)
#   postgres:15           = that rootfs + Debian's postgresql-15 (installed on the host with
#                           chroot apt-get, never inside a container) + docker/base/postgres-entrypoint.sh
#                           (its stop signal is SIGTERM: compose sets SIGINT, PostgreSQL's fast shutdown)
# Each is skipped when the tag already exists with the same recipe (label audit-trail.base-recipe),
# so only the first run pays. Needs root, debootstrap, and DOCKER_HOST pointing at a running daemon.
# Usage: docker/base/build-base-images.sh [--force]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
force="${1:-}"

node_bin="$(command -v node)"
npm_dir="$(npm root -g)/npm"
node_version="$("$node_bin" --version)"
case "$node_version" in v20.*) ;; *) echo "build-base-images: node:20-bookworm-slim needs this machine's Node 20, found $node_version" >&2; exit 1 ;; esac

# The recipe: this file, the entrypoint, and the Node.js and npm copied in. A change rebuilds.
recipe="$(cat "$0" "$here/postgres-entrypoint.sh" | sha256sum | cut -c1-16)"
node_recipe="$recipe-$node_version-$(node -p "require('$npm_dir/package.json').version")"

has_image() { # tag recipe
  [ "$force" != --force ] &&
    [ "$(docker image inspect -f '{{ index .Config.Labels "audit-trail.base-recipe" }}' "$1" 2>/dev/null)" = "$2" ]
}
if has_image node:20-bookworm-slim "$node_recipe" && has_image postgres:15 "$recipe"; then
  echo "base images: node:20-bookworm-slim and postgres:15 are built (cached)"
  exit 0
fi

# Debian's mirror and suites as this machine's apt uses them (never a host of our own choosing).
mirror="$(apt-get indextargets --format '$(URI)' 'Created-By: Packages' | sed -n 's#/dists/bookworm/main/binary-[^/]*/Packages$##p' | head -1)"
[ -n "$mirror" ] || { echo "build-base-images: no bookworm main in this machine's apt sources" >&2; exit 1; }

work="$(mktemp -d /var/tmp/audit-trail-base.XXXXXX)"
mounted=()
cleanup() {
  for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

in_chroot() { # rootfs command...: apt and dpkg in the rootfs, on the host, services never started
  local root="$1"
  shift
  mount -t proc proc "$root/proc" && mounted+=("$root/proc")
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d" && chmod +x "$root/usr/sbin/policy-rc.d"
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 "$@" \
    >>"$work/chroot.log" 2>&1 || { tail -20 "$work/chroot.log" >&2; return 1; }
  rm -f "$root/usr/sbin/policy-rc.d"
  : > "$root/etc/resolv.conf"
  umount "$root/proc" && unset 'mounted[-1]'
}
slim() { # rootfs: drop what an image does not need
  rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin "$1"/var/cache/apt/archives/*.deb \
    "$1"/usr/share/doc/* "$1"/usr/share/man/* "$1"/usr/share/info/* "$1"/var/log/*.log "$1"/tmp/*
}
import() { # rootfs tag recipe changes...
  local root="$1" tag="$2" label="$3"
  shift 3
  local changes=(--change "LABEL audit-trail.base-recipe=$label")
  for c in "$@"; do changes+=(--change "$c"); done
  tar -C "$root" --numeric-owner -c . | docker import "${changes[@]}" - "$tag" >/dev/null
  echo "base images: built $tag ($(docker image inspect -f '{{ .Size }}' "$tag" | awk '{ printf "%d MB", $1 / 1e6 }'))"
}

echo "base images: debootstrap bookworm minbase from this machine's Debian mirror"
debootstrap --variant=minbase --include=ca-certificates bookworm "$work/base" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { tail -20 "$work/debootstrap.log" >&2; exit 1; }
# Updates and security fixes: the bookworm suites of this machine's apt sources (Debian's only).
apt-get indextargets --format '$(URI)' 'Created-By: Packages' |
  sed -n 's#^\(.*\)/dists/\(bookworm\(-updates\|-security\)\{0,1\}\)/main/binary-[^/]*/Packages$#deb \1 \2 main#p' |
  sort -u >"$work/base/etc/apt/sources.list"
in_chroot "$work/base" sh -c 'apt-get -qq update && apt-get -qq -y upgrade >/dev/null'

# postgres:15
cp -a "$work/base" "$work/postgres"
in_chroot "$work/postgres" sh -c 'apt-get -qq update && apt-get -qq -y install --no-install-recommends postgresql-15 >/dev/null &&
  (pg_dropcluster 15 main 2>/dev/null || true)'
install -m 0755 "$here/postgres-entrypoint.sh" "$work/postgres/usr/local/bin/docker-entrypoint.sh"
slim "$work/postgres"
import "$work/postgres" postgres:15 "$recipe" \
  'ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  'ENV PGDATA=/var/lib/postgresql/data' \
  'VOLUME /var/lib/postgresql/data' \
  'ENTRYPOINT ["docker-entrypoint.sh"]' \
  'EXPOSE 5432' \
  'CMD ["postgres"]'
rm -rf "$work/postgres"

# node:20-bookworm-slim: this machine's node and npm, its certificate authorities (npm reaches the
# registry through them during a `docker build --network host`), and the `node` user (uid 1000).
root="$work/base"
install -m 0755 "$node_bin" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/lib/node_modules"
cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
echo 'node:x:1000:' >> "$root/etc/group"
echo 'node:x:1000:1000::/home/node:/bin/bash' >> "$root/etc/passwd"
echo 'node:*:19000:0:99999:7:::' >> "$root/etc/shadow"
install -d -o 1000 -g 1000 -m 0755 "$root/home/node"
slim "$root"
import "$root" node:20-bookworm-slim "$node_recipe" \
  "ENV NODE_VERSION=${node_version#v}" \
  'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  'CMD ["node"]'
