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
# the Node image has no browser. The streams failover drill (two more instances of the service, as processes)
# runs on the host's PostgreSQL in `npm test`: inside the container it would only take the most time again.
# Everything else runs here against the PostgreSQL container.
npm run test:e2e -- --testPathIgnorePatterns 'test/(console(-admin|-streams)?|swagger-ui|stream-failover)\.e2e-spec\.ts'
