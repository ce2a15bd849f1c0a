/**
 * jest's asymmetric matchers (`expect.any`, `expect.stringMatching`, …) as they are, typed `unknown`
 * where @types/jest types them `any`: an expected value that holds one is then not an unsafe `any`
 * (typescript-eslint's no-unsafe-assignment). For specs only (a fixture, left out of builds).
 */
interface AsymmetricMatchers {
  any(classType: unknown): unknown;
  anything(): unknown;
  arrayContaining(array: readonly unknown[]): unknown;
  objectContaining(object: object): unknown;
  stringContaining(text: string): unknown;
  stringMatching(pattern: string | RegExp): unknown;
}

export const like: AsymmetricMatchers = expect;
