import { cpSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

/**
 * `npm run build` (and `npm install`, through the prepare script): the production build in dist/ that bin/slipway.js
 * runs. One entry (the CLI, whose `server` command is `npm start`), code-split at every dynamic import so what a
 * command loads on demand stays on demand. Our code is bundled with the libraries of BUNDLED_PACKAGES: loading
 * 1,400 separate modules (typebox and kysely alone are 630 files) cost about half of the start.
 * No type checking here (`npm run typecheck` does that); the measurements behind this: docs/decisions.md, "Runtime".
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');
/**
 * Bundled: pure JavaScript read by no path of its own. ESM libraries (the bulk of the module count), and Fastify with
 * its CommonJS dependencies, the logger and the CLI parser (~45 ms of a warm start: resolving and reading hundreds
 * of files). Left out, resolved from node_modules: native addons (better-sqlite3), what reads files beside itself
 * (pdfkit's fonts, @fastify/swagger-ui's pages), and what loads only on first use (oidc-provider, the AWS SDK, pg,
 * nodemailer, http-proxy-3 with the local agent).
 */
const BUNDLED_PACKAGES = new Set([
  'typebox',
  'kysely',
  'yaml',
  'jose',
  'openapi-fetch',
  'uuid',
  'fastify',
  'avvio',
  'find-my-way',
  'fast-json-stringify',
  'ajv',
  'ajv-formats',
  'fast-uri',
  'json-schema-ref-resolver',
  'rfdc',
  'light-my-request',
  'pino',
  'abstract-logging',
  'fastq',
  'reusify',
  'toad-cache',
  'process-warning',
  'secure-json-parse',
  'safe-regex2',
  'ret',
  'semver',
  'fastify-plugin',
  '@fastify/rate-limit',
  '@lukeed/ms',
  'ip-address',
  'fast-querystring',
  '@fastify/error',
  '@fastify/ajv-compiler',
  '@fastify/fast-json-stringify-compiler',
  '@fastify/merge-json-schemas',
  'commander',
  'close-with-grace',
  'negotiator',
  're2js',
  'picomatch',
]);

function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

rmSync(DIST, { recursive: true, force: true });
// The web console (console/, docs/console.md) builds beside the server, in parallel: dist/console, served under /console/.
const consoleBuilt = buildConsole();
await build({
  input: path.join(ROOT, 'src/cli/slipway.ts'),
  platform: 'node',
  external: (id) => !id.startsWith('.') && !path.isAbsolute(id) && !BUNDLED_PACKAGES.has(packageOf(id)),
  output: { dir: DIST, format: 'esm', sourcemap: true, entryFileNames: 'slipway.js' },
  logLevel: 'warn',
});
// Files the code reads beside itself at run time (`new URL('./catalog/', import.meta.url)` in the chunk that holds it).
cpSync(path.join(ROOT, 'src/modules/platform-templates/catalog'), path.join(DIST, 'catalog'), { recursive: true });
await consoleBuilt;

/** The console's production build (Vite, configured in console/vite.config.ts). */
async function buildConsole(): Promise<void> {
  const { build: viteBuild } = await import('vite');
  await viteBuild({ configFile: path.join(ROOT, 'console/vite.config.ts'), logLevel: 'warn' });
}
