#!/usr/bin/env bash
# Builds deadbolt's Redis image FROM scratch out of the host's Debian packages
# and the clockshift preload library: no registry is reachable, so nothing may
# be pulled. Idempotent: does nothing when the image exists and was built from
# this recipe (this script and clockshift.c); rebuilds when the recipe changed.
set -euo pipefail

image=${1:-deadbolt/redis:7.0}
here=$(cd "$(dirname "$0")" && pwd)
recipe=$(cat "$here/build.sh" "$here/clockshift.c" | sha256sum | cut -c1-16)
if [ "$(docker image inspect -f '{{index .Config.Labels "org.deadbolt.recipe"}}' "$image" 2>/dev/null)" = "$recipe" ]; then
  echo "image $image is present"
  exit 0
fi

need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v redis-sentinel >/dev/null 2>&1 || need+=(redis-sentinel)
[ -e /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 ] || need+=(libfaketime)
command -v gcc >/dev/null 2>&1 || need+=(gcc libc6-dev) # for clockshift.c
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]} with apt-get"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  # The packages start system services; deadbolt only needs the binaries.
  $sudo systemctl stop redis-server redis-sentinel >/dev/null 2>&1 || true
  $sudo service redis-server stop >/dev/null 2>&1 || true
  $sudo service redis-sentinel stop >/dev/null 2>&1 || true
fi

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
root=$ctx/rootfs
mkdir -p "$root/usr/bin" "$root/data" "$root/tmp"

server=$(readlink -f "$(command -v redis-server)")
faketime=$(readlink -f /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1)
# Redis picks sentinel mode from argv[0], so both names are real files.
cp "$server" "$root/usr/bin/redis-server"
cp "$server" "$root/usr/bin/redis-sentinel"
mkdir -p "$root/usr/lib/faketime" "$root/usr/lib/deadbolt"
cp "$faketime" "$root/usr/lib/faketime/libfaketime.so.1"
gcc -shared -fPIC -O2 -Wall -Wextra -Werror -o "$root/usr/lib/deadbolt/clockshift.so" "$here/clockshift.c"

copy_libs() {
  ldd "$1" | awk '/=>/ { print $3 } /^\t\/lib/ { print $1 }' | while read -r lib; do
    [ -n "$lib" ] && [ -e "$lib" ] || continue
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
}
copy_libs "$server"
copy_libs "$faketime"
copy_libs "$root/usr/lib/deadbolt/clockshift.so"

# Names come from /etc/hosts first (the cluster writes every node there),
# DNS only after: Docker's DNS forgets a node that is down.
mkdir -p "$root/etc"
echo 'hosts: files dns' > "$root/etc/nsswitch.conf"

cat > "$ctx/Dockerfile" <<'DOCKERFILE'
FROM scratch
COPY rootfs/ /
WORKDIR /data
EXPOSE 6379 26379
ENTRYPOINT ["/usr/bin/redis-server"]
DOCKERFILE

docker build --label org.deadbolt.image=redis --label org.deadbolt.recipe="$recipe" -t "$image" "$ctx"
