import { createHash, createHmac, createSecretKey } from 'node:crypto';
import { badRequest } from '../../lib/errors.ts';
import { associatedData, openSecret, type Definition, type ProjectDefinitions, type VariableDefinitions } from './variables.definitions.ts';
import { resolveVariables, type ResolvedVariable } from './variables.resolver.ts';
import type { SnapshotVariable, VariableSnapshot, VariablesDeps } from './variables.service.ts';

/**
 * The deployment snapshot (rule 4) and its content hash: what a deployment stores of its variables, with secrets
 * and hidden built-ins sealed, and the hash that tells whether a running service is OUT_OF_DATE.
 */

/** Sealed hidden built-in values kept for reuse in snapshots (oldest out first). */
const CACHED_SEALED_BUILT_INS = 10_000;

export type VariableSnapshots = ReturnType<typeof createVariableSnapshots>;

export function createVariableSnapshots(
  deps: Pick<VariablesDeps, 'secrets' | 'fingerprintKey'>,
  reader: Pick<VariableDefinitions, 'consumer' | 'visibleDefinitions'>,
) {
  const { secrets } = deps;
  const { consumer, visibleDefinitions } = reader;
  const sealedBuiltInCache = new Map<string, { envelope: string; associated_data: string }>();
  // A key object made once: given the raw key, each HMAC would import it again, which cost more than the HMAC itself.
  const fingerprintKey = createSecretKey(deps.fingerprintKey);

  function fingerprint(value: string): string {
    return createHmac('sha256', fingerprintKey).update(value, 'utf8').digest('base64url');
  }

  /**
   * What the content hash takes of a variable's value: the value itself when it may be shown, else a keyed
   * fingerprint, so the hash says nothing about secrets. A stored secret is opened once per project revision.
   */
  function valueDigest(variable: ResolvedVariable<Definition>, project: ProjectDefinitions | undefined, memo: Map<string, string>): string {
    const holder = variable.chain[variable.chain.length - 1] as Definition;
    if (variable.unresolved !== undefined) return 'unresolved';
    if (!variable.hidden) return `v:${holder.value ?? ''}`;
    const known = memo.get(holder.id);
    if (known !== undefined) return known;
    let digest: string;
    if (holder.secret && holder.row !== undefined) {
      const envelope = holder.row.value_envelope ?? '';
      digest = project?.fingerprints.get(envelope) ?? `h:${fingerprint(openSecret(secrets, holder.row))}`;
      project?.fingerprints.set(envelope, digest);
    } else {
      digest = `h:${fingerprint(holder.value ?? '')}`;
    }
    memo.set(holder.id, digest);
    return digest;
  }

  /** SHA-256 over name, mount, dangling alias and value digest of every final variable (NUL cannot occur in any of them). */
  function contentHash(resolved: ResolvedVariable<Definition>[], project: ProjectDefinitions | undefined): string {
    const memo = new Map<string, string>();
    const lines = resolved.map(
      (variable) => `${variable.key}\0${variable.definition.mountPath ?? ''}\0${variable.unresolved ?? ''}\0${valueDigest(variable, project, memo)}`,
    );
    return createHash('sha256').update(lines.join('\n'), 'utf8').digest('hex');
  }

  /**
   * The snapshot a deployment stores (rule 4: a running service keeps it until redeployed). Secrets travel sealed:
   * a stored secret as its own envelope, a hidden built-in sealed afresh for this snapshot; plain values as they are.
   * An alias that names nothing refuses the deployment (400) rather than starting a service with a missing value.
   */
  async function resolveForDeployment(environmentId: string, serviceId?: string): Promise<VariableSnapshot> {
    const owner = await consumer(environmentId, serviceId);
    const { definitions, project } = await visibleDefinitions(owner);
    const resolved = resolveVariables(definitions);
    const broken = resolved.filter((variable) => variable.unresolved !== undefined);
    if (broken.length > 0) {
      throw badRequest(
        `alias(es) naming no variable here: ${broken.map((variable) => `${variable.key} → $${variable.unresolved ?? ''}`).join(', ')}`,
      );
    }
    // One sealed copy per hidden built-in, shared by the aliases that end at it and kept for the next snapshot.
    const sealedBuiltIns = new Map<string, { envelope: string; associated_data: string }>();
    const variables = resolved.map((variable): SnapshotVariable => {
      const holder = variable.chain[variable.chain.length - 1] as Definition;
      const base = {
        key: variable.key,
        scope: variable.definition.scope,
        variable_id: variable.definition.id,
        mount_path: variable.definition.mountPath,
        alias_chain: variable.chain.map((definition) => definition.key),
      };
      if (holder.secret && holder.row !== undefined && holder.row.value_envelope !== null) {
        return { ...base, sealed: { envelope: holder.row.value_envelope, associated_data: associatedData(holder.row) } };
      }
      if (variable.hidden) {
        let sealed = sealedBuiltIns.get(holder.id);
        if (sealed === undefined) {
          sealed = sealedBuiltIn(`variables:snapshot:${environmentId}:${serviceId ?? '-'}:${holder.key}`, holder.value ?? '');
          sealedBuiltIns.set(holder.id, sealed);
        }
        return { ...base, sealed };
      }
      return { ...base, value: holder.value ?? '' };
    });
    return { environment_id: environmentId, service_id: serviceId ?? null, content_hash: contentHash(resolved, project), variables };
  }

  /**
   * A hidden built-in sealed for snapshots, reused while its value stays the same (keyed by its fingerprint, so no
   * plaintext is kept): sealing is the largest share of a snapshot's cost, and one envelope per value and place
   * reveals nothing the content hash does not.
   */
  function sealedBuiltIn(associated: string, value: string): { envelope: string; associated_data: string } {
    const cacheKey = `${associated}\0${fingerprint(value)}`;
    const kept = sealedBuiltInCache.get(cacheKey);
    if (kept !== undefined) return kept;
    const sealed = { envelope: secrets.seal(value, associated), associated_data: associated };
    sealedBuiltInCache.set(cacheKey, sealed);
    if (sealedBuiltInCache.size > CACHED_SEALED_BUILT_INS) {
      const oldest = sealedBuiltInCache.keys().next().value;
      if (oldest !== undefined) sealedBuiltInCache.delete(oldest);
    }
    return sealed;
  }

  /** The plaintext of one snapshot variable, for the agent that starts the workload. */
  function openSnapshotValue(variable: SnapshotVariable): string {
    if (variable.sealed === undefined) return variable.value ?? '';
    return secrets.open(variable.sealed.envelope, variable.sealed.associated_data);
  }

  return { contentHash, resolveForDeployment, openSnapshotValue };
}
