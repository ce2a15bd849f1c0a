#!/usr/bin/env bash
# The e2e service of docker/docker-compose.yml: copies the read-only checkout (/src) into the
# container, installs offline from a copy of the read-only npm cache (/npm-cache; npm does not
# find its entries in a read-only cache), runs `npm run test:e2e` but for the browser suites.
set -euo pipefail
work="$HOME/audit-trail"
mkdir -p "$work"
tar -C /src --exclude=./node_modules --exclude=./dist --exclude=./data --exclude=./.git --exclude=./bench/results -cf - . |
  tar -C "$work" -xf -
cd "$work"
mkdir -p "$HOME/.npm"
cp -r /npm-cache/_cacache "$HOME/.npm/"
npm ci --offline --no-audit --no-fund --cache "$HOME/.npm"
if [ ! -x node_modules/.bin/nest ]; then
  echo "npm ci installed nothing (no node_modules/.bin/nest)" >&2
  exit 1
fi
# The browser suites (the console and Swagger UI in Chromium) run on the host, where .ci/run installs Chromium;
# the Node image has no browser. embedded-database runs on the embedded database whichever pass runs it, so
# the host's pass is enough (~170 s here). Everything else runs here against the PostgreSQL container (in CI the
# only PostgreSQL pass: .ci/run runs `npm test` on the embedded default beside this).
# A bound on the whole run (normally ~15 min): a hang ends as a failure that says where, not as CI's own timeout.
timeout --kill-after=30s 2400s npm run test:e2e -- --testPathIgnorePatterns 'test/(console(-admin|-streams|-confirm)?|swagger-ui|embedded-database)\.e2e-spec\.ts'
