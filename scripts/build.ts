import { cpSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

/**
 * `npm run build` (and `npm install`, through the prepare script): the production build in dist/ that bin/slipway.js
 * runs. One entry (the CLI, whose `server` command is `npm start`), code-split at every dynamic import so what a
 * command loads on demand stays on demand. Our code is bundled with the pure-ESM libraries that make up most of the
 * module graph (typebox, kysely, yaml, jose, uuid: ~770 files) — loading 1,400 separate modules cost about half of
 * the start. Every other package stays in node_modules: native addons, CommonJS packages that read files beside
 * themselves (pdfkit's fonts, swagger-ui's pages), and what loads only on first use (oidc-provider, the AWS SDK).
 * No type checking here (`npm run typecheck` does that); the measurements behind this: docs/decisions.md, "Runtime".
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');
const BUNDLED_PACKAGES = new Set(['typebox', 'kysely', 'yaml', 'jose', 'uuid']);

function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

rmSync(DIST, { recursive: true, force: true });
await build({
  input: path.join(ROOT, 'src/cli/slipway.ts'),
  platform: 'node',
  external: (id) => !id.startsWith('.') && !path.isAbsolute(id) && !BUNDLED_PACKAGES.has(packageOf(id)),
  output: { dir: DIST, format: 'esm', sourcemap: true, entryFileNames: 'slipway.js' },
  logLevel: 'warn',
});
// Files the code reads beside itself at run time (`new URL('./catalog/', import.meta.url)` in the chunk that holds it).
cpSync(path.join(ROOT, 'src/modules/platform-templates/catalog'), path.join(DIST, 'catalog'), { recursive: true });
