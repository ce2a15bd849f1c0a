/**
 * `npm run test:ha`: the HA drill (test/ha/failover.ha-spec.ts) on a cluster of its own
 * (test/ha/cluster.ts), not on the e2e suites' database: no global setup.
 */
const e2e = require('../jest-e2e.config.js');

module.exports = {
  ...e2e,
  rootDir: '../..',
  testRegex: '.*\\.ha-spec\\.ts$',
  globalSetup: undefined,
  globalTeardown: undefined,
  testTimeout: 150000,
};
