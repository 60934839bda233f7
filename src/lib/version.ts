import packageJson from '../../package.json' with { type: 'json' };

/** Slipway's version, as package.json says (agents report it with their heartbeats). */
export const SLIPWAY_VERSION: string = packageJson.version;
