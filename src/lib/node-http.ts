/**
 * node:http for the code that calls it. An ES `import { … } from 'node:http'` makes Node build that module's ES
 * facade, which reads every export once — among them the lazy `WebSocket`, `EventSource` and `MessageEvent` getters
 * that load Node's bundled undici: ~25 ms of a 420 ms server start (measured with --cpu-prof), for nothing the server
 * uses. The CommonJS module object has the same functions without a facade. Types still come from `import type`.
 * ESLint refuses value imports from 'node:http' elsewhere.
 */
export const nodeHttp = process.getBuiltinModule('node:http');
