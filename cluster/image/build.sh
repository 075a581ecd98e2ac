#!/usr/bin/env bash
# Builds one of deadbolt's server images FROM scratch, with the clockshift
# preload library: no registry is reachable, so nothing may be pulled.
#
#   build.sh [SERVER [IMAGE]]
#
# SERVER is one of cluster.Servers (cluster/image.go):
#   redis-7.0   deadbolt/redis:7.0    the host's Debian (bookworm) packages
#   redis-8.0   deadbolt/redis:8.0    Debian trixie's redis-server, in a chroot
#   valkey-8.1  deadbolt/valkey:8.1   Debian trixie's valkey-server, in a chroot
# An IMAGE alone (a name with a colon) builds redis-7.0 under that name, as
# this script did before it took a server.
#
# The trixie servers come from a root filesystem debootstrap makes once from
# Debian's archive and keeps under ~/.cache/deadbolt/ (XDG_CACHE_HOME); the
# packages are installed there with the chroot's apt-get, clockshift.c is
# compiled there against trixie's libc, and the binaries are copied out with
# their shared libraries as the chroot's ldd lists them.
#
# Idempotent: does nothing when the image exists and was built from this
# recipe (this script, clockshift.c and the server's name); rebuilds when the
# recipe changed.
set -euo pipefail

server=${1:-redis-7.0}
image=${2:-}
if [[ $server == *:* && -z $image ]]; then
  image=$server
  server=redis-7.0
fi
case $server in
redis-7.0) suite=host image=${image:-deadbolt/redis:7.0} bin=redis-server pkgs=() ;;
redis-8.0) suite=trixie image=${image:-deadbolt/redis:8.0} bin=redis-server pkgs=(redis-server redis-sentinel) ;;
valkey-8.1) suite=trixie image=${image:-deadbolt/valkey:8.1} bin=valkey-server pkgs=(valkey-server valkey-sentinel) ;;
*)
  echo "build.sh: unknown server $server (known: redis-7.0, redis-8.0, valkey-8.1)" >&2
  exit 2
  ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
recipe=$( (cat "$here/build.sh" "$here/clockshift.c"; echo "$server") | sha256sum | cut -c1-16)
if [ "$(docker image inspect -f '{{index .Config.Labels "org.deadbolt.recipe"}}' "$image" 2>/dev/null)" = "$recipe" ]; then
  echo "image $image is present"
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
apt_install() {
  echo "installing $* with apt-get"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
root=$ctx/rootfs
mkdir -p "$root/usr/bin" "$root/data" "$root/tmp" "$root/usr/lib/faketime" "$root/usr/lib/deadbolt"

# from is the file system the server comes from: / for the host's packages,
# the cached chroot for trixie's. run runs a command there.
if [ "$suite" = host ]; then
  from=""
  run() { "$@"; }
  need=()
  command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
  command -v redis-sentinel >/dev/null 2>&1 || need+=(redis-sentinel)
  [ -e /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 ] || need+=(libfaketime)
  command -v gcc >/dev/null 2>&1 || need+=(gcc libc6-dev) # for clockshift.c
  if [ ${#need[@]} -gt 0 ]; then
    apt_install "${need[@]}"
    # The packages start system services; deadbolt only needs the binaries.
    $sudo systemctl stop redis-server redis-sentinel >/dev/null 2>&1 || true
    $sudo service redis-server stop >/dev/null 2>&1 || true
    $sudo service redis-sentinel stop >/dev/null 2>&1 || true
  fi
else
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/deadbolt
  from=$cache/$suite
  run() { $sudo chroot "$from" "$@"; }
  if [ ! -e "$from/.deadbolt-complete" ]; then
    command -v debootstrap >/dev/null 2>&1 || apt_install debootstrap
    echo "making a $suite root file system in $from with debootstrap (once; cached)"
    mkdir -p "$cache"
    $sudo rm -rf "$from.partial"
    $sudo debootstrap --variant=minbase "$suite" "$from.partial" http://deb.debian.org/debian >"$cache/debootstrap.log" 2>&1 || {
      echo "debootstrap failed; its log: $cache/debootstrap.log" >&2
      exit 1
    }
    # Packages must not start services inside the chroot.
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$from.partial/usr/sbin/policy-rc.d" >/dev/null
    $sudo chmod +x "$from.partial/usr/sbin/policy-rc.d"
    $sudo rm -rf "$from"
    $sudo mv "$from.partial" "$from"
    $sudo touch "$from/.deadbolt-complete"
  fi
  missing=()
  for p in "${pkgs[@]}" libfaketime gcc libc6-dev; do
    run dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing ${missing[*]} in the $suite root file system"
    run apt-get update -qq
    DEBIAN_FRONTEND=noninteractive run apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

serverbin=$(run readlink -f "/usr/bin/$bin")
faketime=$(run readlink -f /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1)
# Redis picks sentinel mode from argv[0], and so does Valkey (it takes
# "redis-sentinel" as well as "valkey-sentinel"): both names are real files.
cp "$from$serverbin" "$root/usr/bin/redis-server"
cp "$from$serverbin" "$root/usr/bin/redis-sentinel"
cp "$from$faketime" "$root/usr/lib/faketime/libfaketime.so.1"
# clockshift is compiled against the libc the server runs on.
if [ "$suite" = host ]; then
  gcc -shared -fPIC -O2 -Wall -Wextra -Werror -o "$root/usr/lib/deadbolt/clockshift.so" "$here/clockshift.c"
else
  $sudo mkdir -p "$from/tmp/deadbolt"
  $sudo cp "$here/clockshift.c" "$from/tmp/deadbolt/clockshift.c"
  run gcc -shared -fPIC -O2 -Wall -Wextra -Werror -o /tmp/deadbolt/clockshift.so /tmp/deadbolt/clockshift.c
  cp "$from/tmp/deadbolt/clockshift.so" "$root/usr/lib/deadbolt/clockshift.so"
  $sudo rm -rf "$from/tmp/deadbolt"
fi

# copy_libs copies what ldd (the server's own, in the chroot) lists for a
# file of the server's file system.
copy_libs() {
  run ldd "$1" | awk '/=>/ { print $3 } /^\t\/lib/ { print $1 }' | while read -r lib; do
    [ -n "$lib" ] && [ -e "$from$lib" ] || continue
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$from$lib" "$root$lib"
  done
}
copy_libs "$serverbin"
copy_libs "$faketime"
if [ "$suite" = host ]; then
  copy_libs "$root/usr/lib/deadbolt/clockshift.so"
else
  # ldd runs in the chroot, so the library is looked at where it was built.
  $sudo mkdir -p "$from/tmp/deadbolt"
  $sudo cp "$root/usr/lib/deadbolt/clockshift.so" "$from/tmp/deadbolt/"
  copy_libs /tmp/deadbolt/clockshift.so
  $sudo rm -rf "$from/tmp/deadbolt"
fi

# Names come from /etc/hosts first (the cluster writes every node there),
# DNS only after: Docker's DNS forgets a node that is down.
mkdir -p "$root/etc"
echo 'hosts: files dns' >"$root/etc/nsswitch.conf"

cat >"$ctx/Dockerfile" <<'DOCKERFILE'
FROM scratch
COPY rootfs/ /
WORKDIR /data
EXPOSE 6379 26379
ENTRYPOINT ["/usr/bin/redis-server"]
DOCKERFILE

docker build --label org.deadbolt.image=redis --label org.deadbolt.server="$server" --label org.deadbolt.recipe="$recipe" -t "$image" "$ctx"
