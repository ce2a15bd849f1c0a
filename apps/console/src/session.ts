/** The pasted key lives in sessionStorage only (docs/contract.md §15): never a URL, a cookie or localStorage. */
const KEY = 'audit-console-key';

export const session = {
  key: (): string | null => sessionStorage.getItem(KEY),
  signIn: (key: string): void => sessionStorage.setItem(KEY, key),
  signOut: (): void => sessionStorage.removeItem(KEY),
};
