import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The web console's build (docs/console.md). `npm run build` writes it to dist/console, which the server serves under
 * /console/ (src/http/console.ts). `npm run console:dev` serves it with live reload and proxies everything else
 * (the API, /oidc) to a Slipway server at SLIPWAY_URL (http://127.0.0.1:8080 unless set).
 */
const HERE = path.dirname(fileURLToPath(import.meta.url));
const API = process.env.SLIPWAY_URL ?? 'http://127.0.0.1:8080';

export default defineConfig(({ command }) => ({
  root: HERE,
  base: '/console/',
  publicDir: path.join(HERE, 'public'),
  logLevel: 'warn',
  // A production build is React's production build whatever NODE_ENV the caller has (vitest's is `test`).
  ...(command === 'build' ? { define: { 'process.env.NODE_ENV': JSON.stringify('production') } } : {}),
  build: {
    outDir: path.join(HERE, '../dist/console'),
    emptyOutDir: true,
    target: 'es2022',
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1000,
    rolldownOptions: {
      // React Server Components' "use client" markers in the router's files mean nothing to a client-only bundle.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
  server: {
    host: '127.0.0.1',
    port: 5173,
    strictPort: true,
    // Same origin for the API and the built-in issuer, as in production: no CORS, the Host header kept (the issuer
    // builds its URLs from it; start the server with SLIPWAY_PUBLIC_URL=http://127.0.0.1:5173).
    proxy: { '^/(?!console(/|$)|@|node_modules|src/)': { target: API, changeOrigin: false } },
  },
}));
