import { chmodSync, lstatSync, readdirSync, Stats } from 'node:fs';
import { join } from 'node:path';

/** Read, write and search bits of group and others. */
const GROUP_AND_OTHERS = 0o077;

/**
 * Takes every group and other permission bit off `root` and everything below it, and returns the
 * paths it changed (relative to root, `.` for root itself). Symbolic links are left alone (chmod
 * would follow them); an entry that disappears meanwhile is skipped; any other error (a file of
 * another user, say) is thrown.
 */
export function restrictToOwner(root: string): string[] {
  const changed: string[] = [];
  const visit = (path: string, relative: string): void => {
    let stat: Stats;
    try {
      stat = lstatSync(path);
      if (stat.isSymbolicLink()) return;
      if ((stat.mode & GROUP_AND_OTHERS) !== 0) {
        chmodSync(path, stat.mode & 0o7700);
        changed.push(relative);
      }
      if (!stat.isDirectory()) return;
      for (const name of readdirSync(path)) visit(join(path, name), relative === '.' ? name : join(relative, name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  };
  visit(root, '.');
  return changed;
}
