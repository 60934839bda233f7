import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startGitServer, type TestGitServer } from './git-server.ts';
import { freePort } from './identity-app.ts';
import { killProcessesUnder } from './sample-apps.ts';
import { startSlipwayServer, type SlipwayServer } from './slipway-process.ts';
import type { TestDialect } from './databases.ts';

/**
 * What the end-to-end suites of the local engine deploy with: `slipway server` on a fresh data directory with its
 * local agent (and so its apps proxy) on a free apps port, beside a git server over HTTP holding the repositories
 * `repositories` writes into its root. `close()` leaves nothing behind: the server first, then whatever its workloads
 * left running under the data directory (stopping the server leaves them running, by design), the git server and the
 * repositories.
 */
export interface LocalEngineWorld<Server extends SlipwayServer> {
  server: Server;
  gitServer: TestGitServer;
  gitRoot: string;
  appsPort: number;
  dataDir: string;
  close(): Promise<void>;
}

interface WorldOptions {
  /** The temporary directory's name prefix, to tell the suites' leftovers apart. */
  name: string;
  repositories(gitRoot: string): Promise<void>;
}

const LOCAL_ENGINE = (appsPort: number): Record<string, string> => ({
  // SLIPWAY_LOCAL_AGENT is the default of `slipway server`; the test support turns it off unless asked.
  SLIPWAY_LOCAL_AGENT: 'true',
  SLIPWAY_APPS_PORT: String(appsPort),
  SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS: 'true',
});

async function worldAround<Server extends SlipwayServer>(options: WorldOptions, start: (env: Record<string, string>) => Promise<Server>): Promise<LocalEngineWorld<Server>> {
  const gitRoot = await mkdtemp(path.join(tmpdir(), `slipway-${options.name}-git-`));
  let gitServer: TestGitServer | undefined;
  try {
    await options.repositories(gitRoot);
    gitServer = await startGitServer({ root: gitRoot, privateRepositories: {} });
    const appsPort = await freePort();
    const server = await start(LOCAL_ENGINE(appsPort));
    const started = gitServer;
    return {
      server,
      gitServer: started,
      gitRoot,
      appsPort,
      dataDir: server.dataDir,
      async close() {
        await server.close();
        await killProcessesUnder(server.dataDir);
        await started.close();
        await rm(gitRoot, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await gitServer?.close();
    await rm(gitRoot, { recursive: true, force: true });
    throw error;
  }
}

/** A world whose installation is bootstrapped: an organization and an API token of its owner. */
export function startBootstrappedWorld(dialect: TestDialect, options: WorldOptions) {
  return worldAround(options, (env) => startSlipwayServer(dialect, env, { bootstrap: true }));
}

/** A world on a fresh installation: no organization until the test makes one. */
export function startFreshWorld(dialect: TestDialect, options: WorldOptions) {
  return worldAround(options, (env) => startSlipwayServer(dialect, env));
}
