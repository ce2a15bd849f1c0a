#!/usr/bin/env bash
# npm run test:docker — the Docker files, run for real on this machine (contract §11, Docker):
#   a dockerd of its own (data root kept between runs as the cache of images; socket, pid file and
#   exec root of this run only; no iptables, no NAT, no IP forwarding: containers reach nothing
#   outside this machine), the base images built locally when missing (docker/base/), the API image
#   (the only step with network: `docker build --network host`, for the npm registry), then compose:
#   the migrate service done, health and an append + read with a key; the API connected as its
#   least-privilege role, which owns nothing and is refused `UPDATE events` (SQL over TCP with its
#   password; a wrong one refused: no `trust`); `docker stop` of the API under append load (< 10 s, every
#   201 in PostgreSQL); `down` then `up` keeps the events and the signing key; port published on
#   127.0.0.1 only; /data 0700; not root; the e2e suite inside Docker (`--profile test`, installed
#   offline from the host's npm cache); nothing written to the checkout or to the copy it reads. The trap removes every
#   container, network and volume it made and stops the daemon it started.
# Needs root, dockerd (Debian's docker.io), debootstrap, and `docker compose` or docker-compose.
# Environment: AUDIT_DOCKER_ROOT (data root, default /var/lib/audit-trail-docker), API_PORT
# (default: 3000 when free, else a free port), NPM_CACHE (default: npm's cache).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
started=$(date +%s)
step_started=$started
step() {
  local now
  now=$(date +%s)
  [ -z "${step_name:-}" ] || printf '  [%3ds] %s\n' $((now - step_started)) "$step_name"
  step_name="${1:-}"
  step_started=$now
  [ -z "$step_name" ] || echo "== $step_name"
}
fail() {
  echo "test:docker FAILED: $*" >&2
  exit 1
}

[ "$(id -u)" = 0 ] || fail "needs root (it starts its own dockerd)"
for tool in dockerd docker debootstrap; do command -v "$tool" >/dev/null || fail "$tool is missing (apt-get install docker.io debootstrap)"; done
state="${AUDIT_DOCKER_ROOT:-/var/lib/audit-trail-docker}"
mkdir -p "$state"
# The pids of the daemons on this data root (matched as text, not as a pattern); with `orphaned`,
# only those whose run is gone (parent pid 1).
daemons() {
  ps -eo pid=,ppid=,args= | awk -v root="$state" -v orphaned="${1:-}" '
    ($3 == "dockerd" || $3 ~ /\/dockerd$/) && index($0, " --data-root " root " ") && (orphaned == "" || $2 == 1) { print $1 }'
}
exec 9>"$state.lock"
if ! flock -n 9; then
  # Daemons started by runs before 2026-11-27 inherited the lock and kept it after their run was killed.
  orphans=$(daemons orphaned)
  [ -n "$orphans" ] || fail "another test:docker uses $state"
  echo "  stopping the daemon(s) a killed run left holding the lock: $orphans"
  kill $orphans 2>/dev/null || true
  flock -w 30 9 || fail "another test:docker uses $state"
fi

# This data root's runs are named after it, so that a leftover is told from a run on another root.
runs="/run/audit-trail-docker.$(printf '%s' "$state" | sha256sum | cut -c1-8)"
run="$(mktemp -d "$runs.XXXXXX")"
export DOCKER_HOST="unix://$run/docker.sock" DOCKER_BUILDKIT=0 COMPOSE_DOCKER_CLI_BUILD=0
# The database's passwords, new each run: the owner's (migrate, e2e) and the API's role's.
POSTGRES_PASSWORD="$(node -p "require('crypto').randomBytes(24).toString('base64url')")"
AUDIT_SERVICE_PASSWORD="$(node -p "require('crypto').randomBytes(24).toString('base64url')")"
export POSTGRES_PASSWORD AUDIT_SERVICE_PASSWORD
project="audit-trail-docker-test"
compose_file="$repo/docker/docker-compose.yml"
if docker compose version >/dev/null 2>&1; then compose_cmd=(docker compose); else compose_cmd=(docker-compose); fi
compose_args=(--ansi never -p "$project" -f "$compose_file")
compose() { "${compose_cmd[@]}" "${compose_args[@]}" "$@"; }
command -v "${compose_cmd[0]}" >/dev/null || fail "neither docker compose nor docker-compose (apt-get install docker-compose)"

cleanup() {
  local rc=$?
  set +e
  if [ -S "$run/docker.sock" ]; then
    [ $rc = 0 ] || compose --profile test logs --no-color --tail 20 >&2 2>/dev/null
    compose --profile test down -v --remove-orphans >/dev/null 2>&1
    docker image prune -f >/dev/null 2>&1
  fi
  if [ -f "$run/dockerd.pid" ]; then
    local pid
    pid=$(cat "$run/dockerd.pid")
    kill "$pid" 2>/dev/null
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  fi
  [ $rc = 0 ] || { echo "--- dockerd log (last lines)" >&2; tail -15 "$run/dockerd.log" >&2; }
  # What the daemon left mounted under its exec root (network namespaces), deepest first.
  awk -v run="$run/" 'index($2, run) == 1 { print $2 }' /proc/mounts | sort -r | xargs -r -n1 umount -l
  rm -rf "$run"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step "start dockerd (data root $state)"
# A run that was killed (SIGKILL: no trap) can leave its daemon, its exec root and its containers
# behind. The lock is ours, so a daemon on this data root is such a leftover: stop it first.
stale=$(daemons)
if [ -n "$stale" ]; then
  echo "  stopping a daemon a killed run left on $state (pid $stale)"
  kill $stale 2>/dev/null || true
  for _ in $(seq 1 60); do [ -z "$(daemons)" ] && break; sleep 0.5; done
  stale=$(daemons)
  [ -z "$stale" ] || kill -9 $stale 2>/dev/null || true
fi
for old in "$runs".*; do
  [ "$old" != "$run" ] && [ -d "$old" ] || continue
  awk -v run="$old/" 'index($2, run) == 1 { print $2 }' /proc/mounts | sort -r | xargs -r -n1 umount -l
  rm -rf "$old"
done
# 9>&-: the daemon must not hold this run's lock after the run is gone.
dockerd --data-root "$state" --exec-root "$run/exec" --pidfile "$run/dockerd.pid" -H "$DOCKER_HOST" \
  --iptables=false --ip-masq=false --ip-forward=false --bridge=none --log-level=warn >"$run/dockerd.log" 2>&1 9>&- &
for _ in $(seq 1 60); do docker version >/dev/null 2>&1 && break; sleep 0.5; done
docker version >/dev/null 2>&1 || fail "dockerd did not start"
# And the containers, networks and volumes of such a run: reusing them gave a PostgreSQL container
# that the new API container could not reach (ECONNREFUSED). Every run starts from none.
# (The file needs API_KEYS and SIGNING_KEY_SECRET set even to be read: stand-ins, for `down`.)
: >"$run/no-key"
API_KEYS=- SIGNING_KEY_SECRET="$run/no-key" compose --profile test down -v --remove-orphans 2>&1 | grep -v -e '^$' -e 'not found' | sed 's/^/  /' || true
[ "$(cat /proc/sys/net/ipv4/ip_forward)" = 0 ] ||
  echo "  note: this machine forwards IPv4 (not our doing): only the internal network \"backend\" is sure to reach nothing outside"

step "base images (node:20-bookworm-slim, postgres:15)"
bash "$repo/docker/base/build-base-images.sh"

step "API image (docker build --network host)"
# The build stage is tagged too: its layers (the npm ci one above all) are the cache of the next run,
# and the `image prune` of the clean-up removes only stages and images no tag refers to any more.
for target in build runtime; do
  tag=$([ $target = build ] && echo audit-trail-api-build:local || echo audit-trail-api:local)
  docker build --network host --target $target -f docker/Dockerfile -t $tag . >>"$run/build.log" 2>&1 ||
    { tail -30 "$run/build.log" >&2; fail "docker build --target $target"; }
done
[ "$(docker image inspect -f '{{ .Config.User }}' audit-trail-api:local)" = node ] || fail "the image does not run as node"
docker image inspect -f '{{ .Config.Healthcheck.Test }}' audit-trail-api:local | grep -q /health/ready || fail "no HEALTHCHECK on /health/ready"
docker run --rm --network none --entrypoint bash audit-trail-api:local -c \
  'test -f dist/apps/api/apps/api/src/main.js && test ! -e node_modules/jest && test ! -e node_modules/eslint && test ! -e node_modules/prettier && test ! -e node_modules/@nestjs/cli && test ! -e test && test ! -e .git && test ! -e apps' ||
  fail "the image holds dev dependencies, tests, sources or .git (or no build)"

step "compose up (PostgreSQL + API)"
secrets="$run/secrets"
mkdir -m 0700 "$secrets"
api_key="ats_$(node -p "require('crypto').randomBytes(24).toString('base64url')")"
export API_KEYS="docker-test:$api_key:ingest+read" SIGNING_KEY_SECRET="$secrets/signing-key.pem"
export NPM_CACHE="${NPM_CACHE:-$(npm config get cache)}"
node -e "process.stdout.write(require('crypto').generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }))" >"$SIGNING_KEY_SECRET"
chmod 0600 "$SIGNING_KEY_SECRET"
chown 1000:1000 "$SIGNING_KEY_SECRET"
if [ -z "${API_PORT:-}" ]; then
  API_PORT=$(node -e "const s = require('net').createServer().once('error', () => { const t = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(t.address().port); t.close(); }); }).listen(3000, '127.0.0.1', () => { console.log(3000); s.close(); })")
fi
export API_PORT
base="http://127.0.0.1:$API_PORT"
(env -u API_KEYS "${compose_cmd[@]}" -f "$compose_file" config >/dev/null 2>&1) && fail "compose starts without API_KEYS"
(env -u SIGNING_KEY_SECRET "${compose_cmd[@]}" -f "$compose_file" config >/dev/null 2>&1) && fail "compose starts without SIGNING_KEY_SECRET"
for password in POSTGRES_PASSWORD AUDIT_SERVICE_PASSWORD; do
  (env -u $password "${compose_cmd[@]}" -f "$compose_file" config >/dev/null 2>&1) && fail "compose starts without $password"
done
grep -q 'POSTGRES_HOST_AUTH_METHOD' "$compose_file" && fail "compose sets POSTGRES_HOST_AUTH_METHOD (trust)"
wait_ready() {
  for _ in $(seq 1 120); do
    curl -fsS -o /dev/null "$base/health/ready" 2>/dev/null && return 0
    sleep 0.5
  done
  fail "the API never answered 200 on /health/ready"
}
compose up -d --no-build postgres migrate api
wait_ready
migrate_exit=$(docker inspect -f '{{ .State.Status }} {{ .State.ExitCode }}' "$(compose ps -q migrate)")
[ "$migrate_exit" = "exited 0" ] || fail "the migrate service is $migrate_exit, not exited 0"
api=$(compose ps -q api)
for _ in $(seq 1 60); do [ "$(docker inspect -f '{{ .State.Health.Status }}' "$api")" = healthy ] && break; sleep 1; done
[ "$(docker inspect -f '{{ .State.Health.Status }}' "$api")" = healthy ] || fail "the API container is not healthy"

step "append + read with a key"
smoke_id=$(node docker/test-docker-client.js smoke "$base" "$api_key")
verifier=$(node docker/test-docker-client.js verifier-key "$base")
[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/v1/events/$smoke_id")" = 401 ] || fail "a read without a key was not 401"
echo "  event $smoke_id appended and read back"

step "port, /data, user"
published=$(docker port "$api" 3000/tcp)
[ "$published" = "127.0.0.1:$API_PORT" ] || fail "port 3000 published as $published, not 127.0.0.1:$API_PORT only"
listeners=$(ss -Hltn "sport = :$API_PORT" | awk '{ print $4 }' | sort -u)
[ "$listeners" = "127.0.0.1:$API_PORT" ] || fail "port $API_PORT is bound on: $listeners"
inside=$(compose exec -T api sh -c 'stat -c "%a %U" /data; awk "/^Uid:/ { print \$2 }" /proc/1/status')
[ "$(sed -n 1p <<<"$inside")" = "700 node" ] || fail "/data is $(sed -n 1p <<<"$inside"), not 700 node"
[ "$(sed -n 2p <<<"$inside")" != 0 ] || fail "the API runs as root"
echo "  127.0.0.1:$API_PORT only; /data 700 node; uid $(sed -n 2p <<<"$inside")"

psql() { compose exec -T postgres psql -v ON_ERROR_STOP=1 -qAtX -U postgres "$@"; }
acked_missing() { # ids on stdin: how many are not in the events table
  { echo 'CREATE TEMP TABLE acked (id text); COPY acked FROM STDIN;'; cat; printf '\\.\n'
    echo 'SELECT count(*) FROM acked a WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = audit_ulid_uuid(a.id));'; } | psql
}

step "the API's role: owns nothing, refused UPDATE events (docs/verification.md §7)"
# A read first: the pool closes connections idle for 10 s, and an empty pg_stat_activity proves nothing.
curl -fsS -o /dev/null -H "Authorization: Bearer $api_key" "$base/v1/chains" || fail "a read with the key failed"
[ "$(psql -c "SELECT string_agg(DISTINCT usename, ',') FROM pg_stat_activity WHERE application_name = 'audit-trail-service'")" = audit_service ] ||
  fail "the API is not connected as audit_service alone"
[ "$(psql -c "SELECT rolsuper::text || ' ' || (SELECT count(*) FROM pg_shdepend WHERE refobjid = r.oid AND deptype = 'o') FROM pg_roles r WHERE rolname = 'audit_service'")" = "false 0" ] ||
  fail "audit_service is a superuser or owns objects"
as_service() { # password sql: over TCP (scram-sha-256), as the API's role
  compose exec -T -e PGPASSWORD="$1" postgres psql -h 127.0.0.1 -U audit_service -d postgres -v ON_ERROR_STOP=1 -qAtX -c "$2" 2>&1
}
before=$(psql -c 'SELECT count(*) FROM events')
for sql in "UPDATE events SET actor = 'mallory'" 'TRUNCATE events' "DELETE FROM events" 'SET session_replication_role = replica'; do
  out=$(as_service "$AUDIT_SERVICE_PASSWORD" "$sql") && fail "audit_service was allowed: $sql"
  grep -q 'permission denied' <<<"$out" || fail "$sql as audit_service failed otherwise than refused: $out"
done
[ "$(as_service "$AUDIT_SERVICE_PASSWORD" "SELECT count(*) FROM events WHERE actor = 'mallory'")" = 0 ] || fail "an event was changed"
out=$(as_service "not-the-password" 'SELECT 1') && fail "audit_service logged in with a wrong password"
grep -q 'password authentication failed' <<<"$out" || fail "a wrong password failed otherwise: $out"
[ "$(psql -c 'SELECT count(*) FROM events')" = "$before" ] || fail "the events changed"
echo "  connected as audit_service (no superuser, owns nothing); UPDATE, TRUNCATE, DELETE of events and session_replication_role refused to it; a wrong password refused"

step "docker stop under append load"
load="$run/load.json"
node docker/test-docker-client.js load "$base" "$api_key" "$load" &
load_pid=$!
sleep 3
t0=$(date +%s%N)
docker stop -t 30 "$api" >/dev/null
stop_ms=$((($(date +%s%N) - t0) / 1000000))
wait $load_pid || fail "the load client failed"
exit_code=$(docker inspect -f '{{ .State.ExitCode }}' "$api")
echo "  docker stop took ${stop_ms} ms, exit code $exit_code"
[ "$stop_ms" -lt 10000 ] || fail "docker stop took ${stop_ms} ms (limit 10 s)"
[ "$exit_code" != 137 ] || fail "the API was killed (exit 137), it did not stop on SIGTERM"
node -e "for (const id of JSON.parse(require('fs').readFileSync(process.argv[1])).acked) console.log(id)" "$load" >"$run/acked.txt"
acked=$(wc -l <"$run/acked.txt")
[ "$acked" -gt 0 ] || fail "the load got no 201"
missing=$(acked_missing <"$run/acked.txt")
[ "$missing" = 0 ] || fail "$missing of $acked acknowledged events are not in PostgreSQL"
echo "  all $acked acknowledged events are in PostgreSQL"

step "down (without -v), then up: the data stays"
before=$(psql -c 'SELECT count(*) FROM events')
compose down
compose up -d --no-build postgres migrate api
wait_ready
after=$(psql -c 'SELECT count(*) FROM events')
[ "$before" = "$after" ] || fail "$before events before down, $after after up"
missing=$(acked_missing <"$run/acked.txt")
[ "$missing" = 0 ] || fail "$missing acknowledged events lost across down/up"
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $api_key" "$base/v1/events/$smoke_id")" = 200 ] ||
  fail "the first event is gone after down/up"
[ "$(node docker/test-docker-client.js verifier-key "$base")" = "$verifier" ] || fail "the signing key changed across down/up"
echo "  $after events and the signing key kept"

step "e2e suite inside Docker (--profile test: npm run test:e2e against the PostgreSQL container)"
marker="$run/marker"
touch "$marker"
sleep 1
compose stop api >/dev/null 2>&1
# The container's user (node, uid 1000) reads the checkout: a clone in a 0700 directory (mktemp -d)
# is closed to it, so it gets a world-readable copy of what it reads instead (E2E_SRC).
export E2E_SRC="$run/e2e-src"
mkdir -p "$E2E_SRC"
tar -C "$repo" --exclude=./node_modules --exclude=./dist --exclude=./data --exclude=./.git --exclude=./bench/results -cf - . |
  tar -C "$E2E_SRC" -xf -
chmod -R a+rX "$E2E_SRC"
copied="$run/copied"
touch "$copied"
sleep 1
# Bounded (the suite inside bounds itself at 40 min): a container that hangs fails the run, it does not stall CI.
timeout 2700s "${compose_cmd[@]}" "${compose_args[@]}" --profile test run --rm -T e2e || fail "the e2e suite failed inside Docker"

step "nothing written to the checkout (nor to the copy the container read)"
changed=$(find "$repo" -path "$repo/.git" -prune -o -cnewer "$marker" -print | head -20)
[ -z "$changed" ] || fail "the checkout changed during the e2e step: $changed"
changed=$(find "$E2E_SRC" -cnewer "$copied" -print | head -20)
[ -z "$changed" ] || fail "the e2e container wrote to what it mounts read-only: $changed"
if [ "$(stat -c %u "$repo")" != 0 ]; then
  root_owned=$(find "$repo" -path "$repo/.git" -prune -o -user 0 -print | head -20)
  [ -z "$root_owned" ] || fail "root-owned files in the checkout: $root_owned"
fi

step
echo "test:docker passed in $(($(date +%s) - started)) s"
