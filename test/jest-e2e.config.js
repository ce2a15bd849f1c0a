/** e2e tests: the real AppModule over supertest on a real database (see test/support/database.ts). */
module.exports = {
  rootDir: '..',
  testEnvironment: 'node',
  moduleFileExtensions: ['js', 'json', 'ts'],
  roots: ['<rootDir>/test'],
  testRegex: '.*\\.e2e-spec\\.ts$',
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true }] },
  moduleNameMapper: {
    '^@app/(hashing|database|auth|common|verification)(|/.*)$': '<rootDir>/libs/$1/src$2',
    '^@audit-trail/client$': '<rootDir>/libs/client/src',
    '^@audit-trail/client/nestjs$': '<rootDir>/libs/client/src/nestjs',
  },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 60000,
  // Where a run is, and an end to one that hangs (test/support/watchdog-reporter.js).
  reporters: ['default', '<rootDir>/test/support/watchdog-reporter.js'],
};
