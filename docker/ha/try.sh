#!/usr/bin/env bash
# docker/ha/ tried for real (docs/scaling.md, "High availability"): a dockerd of its own (data root
# AUDIT_DOCKER_ROOT, default /var/lib/audit-trail-docker-ha: never the one of docker/test-docker.sh,
# whose lock CI holds), the base images (docker/base/), the API and HA images, `compose up`, an append
# on each instance and a list through the replicas, then `compose kill` of the leader's container and
# the answers until the first 201. Removes its containers and volumes and stops its daemon at the end
# (the images stay, as the cache of the next run). Needs root, dockerd, debootstrap, docker-compose.
# Not part of CI: npm run test:ha is the drill there.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$repo"
state="${AUDIT_DOCKER_ROOT:-/var/lib/audit-trail-docker-ha}"
mkdir -p "$state"
run="$(mktemp -d /run/audit-trail-docker-ha.XXXXXX)"
export DOCKER_HOST="unix://$run/docker.sock" DOCKER_BUILDKIT=0 COMPOSE_DOCKER_CLI_BUILD=0
compose() { docker-compose --ansi never -p audit-ha -f docker/ha/docker-compose.yml "$@"; }
cleanup() {
  set +e
  compose logs --no-color --tail 30 > "${HA_LOGS:-/dev/null}" 2>&1
  compose down -v --remove-orphans >/dev/null 2>&1
  pid=$(cat "$run/dockerd.pid" 2>/dev/null); [ -n "$pid" ] && kill "$pid"
  for _ in $(seq 1 60); do [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  awk -v run="$run/" 'index($2, run) == 1 { print $2 }' /proc/mounts | sort -r | xargs -r -n1 umount -l
  rm -rf "$run"
}
trap cleanup EXIT
dockerd --data-root "$state" --exec-root "$run/exec" --pidfile "$run/dockerd.pid" -H "$DOCKER_HOST" \
  --iptables=false --ip-masq=false --ip-forward=false --bridge=none --log-level=warn >"$run/dockerd.log" 2>&1 &
for _ in $(seq 1 60); do docker version >/dev/null 2>&1 && break; sleep 0.5; done
echo "== $(date +%T) base images"
bash docker/base/build-base-images.sh
echo "== $(date +%T) API image"
docker build --network host -f docker/Dockerfile -t audit-trail-api:local . > "$run/build.log" 2>&1 || { tail -30 "$run/build.log"; exit 1; }
echo "== $(date +%T) HA image"
docker build --network host -f docker/ha/Dockerfile -t audit-trail-ha:local . >> "$run/build.log" 2>&1 || { tail -30 "$run/build.log"; exit 1; }
secrets="$run/secrets"; mkdir -m 0700 "$secrets"
key="ats_$(node -p "require('crypto').randomBytes(24).toString('base64url')")"
export API_KEYS="ha:$key:ingest+read" SIGNING_KEY_SECRET="$secrets/signing-key.pem"
node -e "process.stdout.write(require('crypto').generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }))" >"$SIGNING_KEY_SECRET"
chmod 0600 "$SIGNING_KEY_SECRET"; chown 1000:1000 "$SIGNING_KEY_SECRET"
# Each password is 24 random bytes from the kernel's CSPRNG ($RANDOM is 15 bits of a guessable PRNG).
secret() { node -p "'$1-' + require('crypto').randomBytes(24).toString('base64url')"; }
export POSTGRES_PASSWORD="$(secret pw)" REPLICATION_PASSWORD="$(secret rep)" AUDIT_SERVICE_PASSWORD="$(secret svc)" HAPROXY_STATS_PASSWORD="$(secret stats)"
export SECRETS_KEY="$(node -p "require('crypto').randomBytes(32).toString('base64')")" API_PORT=13000 API2_PORT=13001 HAPROXY_STATS_PORT=17000
echo "== $(date +%T) compose up"
compose up -d --no-build
for i in $(seq 1 180); do
  a=$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:13000/health/ready || true)
  b=$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:13001/health/ready || true)
  [ "$a" = 200 ] && [ "$b" = 200 ] && break; sleep 1
done
echo "ready: $a $b"
compose ps
compose exec -T pg1 patronictl -c /etc/patroni/patroni.yml list
post() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -d "{\"actor\":\"d\",\"action\":\"a.b\"}" "http://127.0.0.1:$1/v1/events"; }
echo "appends: $(post 13000) $(post 13001)"
curl -s -H "Authorization: Bearer $key" "http://127.0.0.1:13001/v1/events?limit=1" | head -c 300; echo
leader=$(compose exec -T pg1 patronictl -c /etc/patroni/patroni.yml list -f json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).find(m=>m.Role==="Leader").Member))')
echo "== $(date +%T) kill $leader"
t0=$(date +%s%N); compose kill "$leader"
codes=""
for i in $(seq 1 60); do c=$(post 13000); codes="$codes $c"; [ "$c" = 201 ] && break; sleep 0.5; done
echo "after kill: $codes; first 201 after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
sleep 5
compose exec -T "$( [ "$leader" = pg1 ] && echo pg2 || echo pg1)" patronictl -c /etc/patroni/patroni.yml list
echo "appends: $(post 13000) $(post 13001)"
echo "== $(date +%T) done"
