import type { EnvVar } from 'kubernetes-types/core/v1.js';
import type { SpecGitSource } from '../../protocol/agent-protocol.ts';

/**
 * How a Job of the driver checks a commit out (an image build, a Terraform run): an init container runs
 * CLONE_SCRIPT into the `/workspace` emptyDir, and a private repository's token reaches git only through the
 * askpass program of a mounted Secret (`/slipway/git/{askpass,username,password}`), never in arguments or
 * environment values (where `kubectl describe` and the deployment log would show it).
 */

/** git asks its askpass program for the user name, then the password: the answers are files beside it. */
export const GIT_ASKPASS_SCRIPT = `#!/bin/sh
case "$1" in
  Username*) cat /slipway/git/username ;;
  *) cat /slipway/git/password ;;
esac
`;

/** Fetches only the commit where the server allows it (GitHub, GitLab do); else the branch, then checks the commit out. */
export const GIT_CLONE_SCRIPT = `set -eu
git init -q /workspace
cd /workspace
if ! git fetch -q --depth=1 --no-tags -- "$GIT_URL" "$GIT_COMMIT" 2>/dev/null; then
  echo "fetching \${GIT_BRANCH:-the default branch} to find $GIT_COMMIT"
  if [ -n "\${GIT_BRANCH:-}" ]; then git fetch -q --no-tags -- "$GIT_URL" "$GIT_BRANCH"; else git fetch -q --no-tags -- "$GIT_URL"; fi
fi
git -c advice.detachedHead=false checkout -q "$GIT_COMMIT"
echo "checked out $GIT_COMMIT"
`;

/** The clone container's environment: where and what to fetch (the login comes by GIT_ASKPASS, added with its mount). */
export function gitCloneEnvOf(git: SpecGitSource, commitId: string): EnvVar[] {
  return [
    { name: 'GIT_URL', value: git.url },
    { name: 'GIT_COMMIT', value: commitId },
    ...(git.branch === null || git.branch === '' ? [] : [{ name: 'GIT_BRANCH', value: git.branch }]),
    { name: 'GIT_TERMINAL_PROMPT', value: '0' },
  ];
}
