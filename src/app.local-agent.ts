import { tmpdir } from 'node:os';
import path from 'node:path';
import { startLocalAgent, type RunningLocalAgent } from './agent/local-agent.ts';
import type { Config } from './config.ts';
import { HttpsPortUnusableError, openAppsProxyTls } from './engine/local/apps-proxy.client.ts';
import type { GitAccess } from './git/git-access.ts';
import type { FastifyTypeBox } from './http/fastify.types.ts';
import { SLIPWAY_VERSION } from './lib/version.ts';
import { createInProcessAgentClient } from './modules/agents/agents.in-process.ts';
import type { AgentsService } from './modules/agents/agents.service.ts';
import type { ClustersService } from './modules/clusters/clusters.service.ts';
import type { createHttpsWiring } from './modules/certificates/certificates.wiring.ts';

export interface LocalAgentOptions {
  config: Partial<Pick<Config, 'localAgent' | 'dataDir' | 'host' | 'appsPort' | 'localPostgresUrl' | 'agentConcurrency' | 'workloadIsolation' | 'appsHsts'>>;
  agents: AgentsService;
  clusters: Pick<ClustersService, 'listLocalClusterIds'>;
  git: GitAccess;
  https: Pick<ReturnType<typeof createHttpsWiring>, 'close' | 'serveHttps'>;
  /** Where the apps proxy serves, once it does (SLIPWAY_APPS_PORT 0 picks a free port): the services' links name it. */
  onAppsPort(port: number): void;
}

/**
 * The server's in-process agent for its LOCAL clusters (docs/agent-protocol.md), started by `app.startLocalAgent()`
 * once the server listens (main.ts) and stopped when it closes. Stopping the agent leaves its workloads running: the
 * next start of the server takes them over. A start still under way when the server closes (a SIGTERM right after it
 * listened) is waited for, then stopped the same way.
 */
export function installLocalAgent(app: FastifyTypeBox, options: LocalAgentOptions): void {
  const { config, agents, clusters, git, https } = options;
  let localAgent: Promise<RunningLocalAgent> | undefined;
  let closing = false;
  app.addHook('onClose', async () => {
    closing = true;
    await https.close();
    await (await localAgent?.catch(() => undefined))?.stop();
  });
  app.decorate('startLocalAgent', async () => {
    if (config.localAgent !== true || closing) return undefined;
    localAgent ??= (async () => {
      // This process is the LOCAL clusters' only agent (docs/agent-protocol.md): what it held before a crash resumes now.
      await agents.releaseLeases(await clusters.listLocalClusterIds());
      const stateDir = path.join(config.dataDir ?? tmpdir(), 'agent');
      const started = await startLocalAgent({
        client: createInProcessAgentClient({ agents, clusterIds: () => clusters.listLocalClusterIds() }),
        stateDir,
        appsHost: config.host ?? '127.0.0.1',
        appsPort: config.appsPort ?? 8000,
        git,
        externalPostgresUrl: config.localPostgresUrl,
        version: SLIPWAY_VERSION,
        onTrouble: (message) => app.log.warn({ agent: 'local' }, message),
        concurrency: config.agentConcurrency,
        isolation: config.workloadIsolation ?? 'strict',
        // The whole data directory: the database, the key file, every service's files.
        protectedPaths: config.dataDir === undefined ? [] : [config.dataDir],
      });
      app.log.info({ apps: `http://${started.appsAddress.address}:${started.appsAddress.port}` }, 'the local agent serves LOCAL clusters');
      options.onAppsPort(started.appsAddress.port);
      // HTTPS is the apps proxy's too, once the agent has started it. A port that cannot be listened on is the
      // operator's to fix and stops the start like a taken apps port (main.ts); any other failure leaves HTTP serving.
      const onHttpsTrouble = (message: string) => app.log.warn({ https: true }, message);
      await https.serveHttps((port) => openAppsProxyTls({ stateDir, host: config.host ?? '127.0.0.1', port, hsts: config.appsHsts, onTrouble: onHttpsTrouble })).catch((error: unknown) => {
        if (error instanceof HttpsPortUnusableError) throw error;
        app.log.error({ https: true }, `HTTPS is not served: ${(error as Error).message}`);
      });
      return started;
    })();
    return localAgent;
  });
}
