#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, as `npm start` does; no build step is needed to use the CLI.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/slipway.ts');
