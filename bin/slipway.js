#!/usr/bin/env node
// The `slipway` command, and `npm start` (`slipway server`). It runs the compiled build in dist/ that `npm install`
// (the prepare script) or `npm run build` made. In a checkout whose src/ changed after that build it runs the
// TypeScript sources instead, through Node's own type stripping (saying so on a terminal): slower, never stale.
// Decisions: docs/decisions.md ("Runtime").
import { readdirSync, statSync } from 'node:fs';
import { enableCompileCache } from 'node:module';
import { fileURLToPath } from 'node:url';

// V8's code cache of every module on disk (under the system's temporary directory unless NODE_COMPILE_CACHE names
// another): later starts skip compiling what they compiled before.
enableCompileCache();

const root = fileURLToPath(new URL('..', import.meta.url));

/** The newest modification time of a source file under src/, in ms; 0 when there are no sources (a package install). */
function newestSourceMs() {
  let newest = 0;
  let entries;
  try {
    entries = readdirSync(`${root}src`, { recursive: true, withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    newest = Math.max(newest, statSync(`${entry.parentPath}/${entry.name}`).mtimeMs);
  }
  return newest;
}

function builtMs() {
  try {
    return statSync(`${root}dist/slipway.js`).mtimeMs;
  } catch {
    return undefined;
  }
}

const built = builtMs();
if (built !== undefined && newestSourceMs() <= built) {
  await import('../dist/slipway.js');
} else {
  if (process.stderr.isTTY) {
    process.stderr.write(
    `slipway: ${built === undefined ? 'no compiled build in dist/' : 'src/ changed after the build in dist/'}; running the sources ` +
        '(slower to start). `npm run build` compiles them.\n',
    );
  }
  await import('../src/cli/slipway.ts');
}
