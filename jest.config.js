/** Unit tests: beside the code, no database. */
module.exports = {
  rootDir: '.',
  testEnvironment: 'node',
  moduleFileExtensions: ['js', 'json', 'ts'],
  roots: ['<rootDir>/apps', '<rootDir>/libs'],
  testRegex: '.*\\.spec\\.ts$',
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true }] },
  moduleNameMapper: {
    '^@app/(hashing|database|auth|common|verification)(|/.*)$': '<rootDir>/libs/$1/src$2',
    '^@audit-trail/client$': '<rootDir>/libs/client/src',
    '^@audit-trail/client/nestjs$': '<rootDir>/libs/client/src/nestjs',
  },
};
