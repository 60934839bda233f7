import picomatch from 'picomatch';

/**
 * Whether a git push deploys an application, from its deployment restrictions (the reference's
 * ApplicationDeploymentRestriction: mode MATCH or EXCLUDE, type PATH, value a glob) and the paths the push changed.
 *
 * A changed path *counts* when it matches at least one MATCH glob (or the application has no MATCH restriction) and
 * no EXCLUDE glob. The push deploys when at least one changed path counts: "MATCH src/**" deploys only for changes
 * under src/, "EXCLUDE docs/**" skips pushes that touch nothing but docs. A push whose changed paths are unknown
 * (an empty list: a new branch, a force push the host does not diff) deploys: skipping a deploy on a guess would
 * leave a service silently behind its branch.
 *
 * Globs are picomatch's (`*` within one path segment, `**` across segments, `{a,b}`, `[…]`), matched against paths
 * relative to the repository root with `/` separators; dot files match like any other.
 */

export interface PathRestriction {
  mode: 'MATCH' | 'EXCLUDE';
  value: string;
}

const GLOB_OPTIONS = { dot: true, strictBrackets: true } as const;

export function pushDeploys(restrictions: readonly PathRestriction[], changedPaths: readonly string[]): boolean {
  if (restrictions.length === 0 || changedPaths.length === 0) return true;
  const matchers = (mode: PathRestriction['mode']) => restrictions.filter((restriction) => restriction.mode === mode).map((restriction) => picomatch(restriction.value, GLOB_OPTIONS));
  const includes = matchers('MATCH');
  const excludes = matchers('EXCLUDE');
  return changedPaths
    .map((path) => path.replace(/^\/+/, ''))
    .some((path) => (includes.length === 0 || includes.some((matches) => matches(path))) && !excludes.some((matches) => matches(path)));
}

/** Why a glob cannot be a restriction, or undefined when it can. */
export function globProblem(value: string): string | undefined {
  if (value.startsWith('/')) return 'must be relative to the repository root (no leading /)';
  if (value.split('/').some((segment) => segment === '..' || segment === '.')) return 'must not contain . or .. segments';
  try {
    picomatch.makeRe(value, GLOB_OPTIONS);
  } catch (error) {
    return `is not a valid glob: ${(error as Error).message}`;
  }
  return undefined;
}
