import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import type { SpecVariable } from './local-driver.spec.ts';

/**
 * File variables on the local cluster. On Kubernetes a file variable is a file mounted at its mount path inside the
 * container. A local process shares the host's file system, where that path may be taken or out of reach, so the
 * content is written under the instance's own directory instead — `<dir>/<mount path>` — and the variable's
 * environment variable holds the file's path (the documented way for a program to find it on any cluster). Files
 * are owner-only (0600, directories 0700): a file variable may be a secret. The directory goes with the instance.
 */
export function writeFileVariables(dir: string, variables: readonly SpecVariable[]): Record<string, string> {
  const mounted: Record<string, string> = {};
  for (const variable of variables) {
    if (variable.mountPath === null) continue;
    const relative = posix.normalize(variable.mountPath).replace(/^\/+/, '');
    if (relative === '' || relative === '.' || relative.split('/').includes('..')) {
      throw new Error(`file variable ${variable.key}: its mount path ${variable.mountPath} does not name a file`);
    }
    const file = join(dir, relative);
    try {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      writeFileSync(file, variable.value, { mode: 0o600 });
    } catch (error) {
      // Two mount paths where one is a directory of the other (/etc/app and /etc/app/key) cannot both be files.
      throw new Error(`file variable ${variable.key}: cannot write it at ${variable.mountPath}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    mounted[variable.key] = file;
  }
  return mounted;
}
