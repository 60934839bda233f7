import type { DriverHost, DriverHostOptions } from './agent.runtime.ts';
import { startLocalDriverHost } from './local-agent.ts';

/**
 * The drivers an agent can run, by name: `slipway agent --driver <name>` picks from here, and the server's in-process
 * agent for LOCAL clusters runs `local`. Each entry starts what its driver needs on this host and answers the host
 * the agent runtime runs over (agent.runtime.ts runAgentOnHost).
 */
export const AGENT_DRIVERS = {
  local: startLocalDriverHost,
  // Loaded only when chosen: the Kubernetes client is a large module the server's local agent never needs.
  kubernetes: async (options: DriverHostOptions) => (await import('./kubernetes-agent.ts')).startKubernetesDriverHost(options),
} as const satisfies Record<string, (options: DriverHostOptions) => Promise<DriverHost>>;

export type AgentDriverName = keyof typeof AGENT_DRIVERS;

export function isAgentDriverName(name: string): name is AgentDriverName {
  return Object.hasOwn(AGENT_DRIVERS, name);
}

export function agentDriverNames(): string[] {
  return Object.keys(AGENT_DRIVERS);
}
