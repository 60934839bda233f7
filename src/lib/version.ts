import { readFileSync } from 'node:fs';

/** Slipway's version, as package.json says (agents report it with their heartbeats). */
export const SLIPWAY_VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
