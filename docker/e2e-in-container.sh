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
# Here: every suite whose subject is the database's behaviour, against the PostgreSQL container. On the host
# only (`npm test`, which .ci/run runs beside this and which runs every suite): the browser suites (the console
# and Swagger UI need the host's Chromium; the Node image has no browser), embedded-database (the embedded
# database whichever pass runs it), and the suites whose subject is the HTTP surface or the client library, not
# the database: the client library's, the OpenAPI description's and the hostile-input ones. A second run of those
# on another database would test nothing new (docs/performance.md, "CI").
# A bound on the whole run (normally ~12 min): a hang ends as a failure that says where, not as CI's own timeout.
# One suite at a time here: `npm test` beside it runs two (its two jest workers and this pass share the two cores).
# (jest itself, not `npm run test:e2e`, whose --maxWorkers jest refuses beside --runInBand.)
timeout --kill-after=30s 2400s node --experimental-vm-modules node_modules/jest/bin/jest.js --config test/jest-e2e.config.js \
  --runInBand --testPathIgnorePatterns \
  'test/(console(-[a-z]+)?|swagger-ui|embedded-database|client-[a-z-]+|openapi|hostile-input)\.e2e-spec\.ts'
