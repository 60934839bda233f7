import { Type } from 'typebox';
import type { AdvancedSettingsKind } from './services.advanced-settings.ts';

/**
 * A service's network settings (the reference's ApplicationNetwork / ContainerNetwork; docs/network-settings.md):
 * today only `sticky_session`, which is the advanced setting `network.ingress.enable_sticky_session` seen through a
 * narrower window. Keeping one stored value for both means the two operations can never disagree, the value travels
 * to the cluster's agent with the other advanced settings (services.agent-spec.ts), and a change makes a deployed
 * service OUT_OF_DATE exactly as an advanced settings change does.
 */

export const NETWORK_SETTINGS_KINDS = ['APPLICATION', 'CONTAINER'] as const satisfies readonly AdvancedSettingsKind[];
export type NetworkSettingsKind = (typeof NETWORK_SETTINGS_KINDS)[number];

/** The advanced setting each network field is kept as. */
const STICKY_SESSION_KEY = 'network.ingress.enable_sticky_session';

const SCHEMA_NAMES: Record<NetworkSettingsKind, { request: string; response: string }> = {
  APPLICATION: { request: 'ApplicationNetworkRequest', response: 'ApplicationNetwork' },
  CONTAINER: { request: 'ContainerNetworkRequest', response: 'ContainerNetwork' },
};

/** The kind's request (a whole replacement: a field left out is its default) and answer. */
export function networkSettingsSchemas(kind: NetworkSettingsKind) {
  const names = SCHEMA_NAMES[kind];
  return {
    request: Type.Object(
      { sticky_session: Type.Optional(Type.Boolean({ default: false, description: 'Send each client to the same instance (a session cookie set by the ingress).' })) },
      { $id: names.request, additionalProperties: false },
    ),
    response: Type.Object({ sticky_session: Type.Boolean() }, { $id: names.response, additionalProperties: false }),
  };
}

export interface NetworkSettings {
  sticky_session: boolean;
}

/** The network settings within a service's full advanced settings. */
export function networkSettingsOf(advancedSettings: Record<string, unknown>): NetworkSettings {
  return { sticky_session: advancedSettings[STICKY_SESSION_KEY] === true };
}

/** The full advanced settings with the network request applied over them (a field left out: its default). */
export function withNetworkSettings(advancedSettings: Record<string, unknown>, request: Partial<NetworkSettings>): Record<string, unknown> {
  return { ...advancedSettings, [STICKY_SESSION_KEY]: request.sticky_session ?? false };
}

/** The network operations over the services module's advanced settings. */
export function createNetworkSettings(services: {
  getAdvancedSettings(kind: AdvancedSettingsKind, serviceId: string): Promise<Record<string, unknown>>;
  editAdvancedSettings(kind: AdvancedSettingsKind, serviceId: string, request: Record<string, unknown>): Promise<Record<string, unknown>>;
}) {
  return {
    async getNetworkSettings(kind: NetworkSettingsKind, serviceId: string): Promise<NetworkSettings> {
      return networkSettingsOf(await services.getAdvancedSettings(kind, serviceId));
    },

    /** Replaces the network settings; the service's other advanced settings stay as they are. */
    async editNetworkSettings(kind: NetworkSettingsKind, serviceId: string, request: Partial<NetworkSettings>): Promise<NetworkSettings> {
      const current = await services.getAdvancedSettings(kind, serviceId);
      return networkSettingsOf(await services.editAdvancedSettings(kind, serviceId, withNetworkSettings(current, request)));
    },
  };
}
