import type { ServiceContext } from './ServicePage.tsx';
import { VariablesByScope } from './VariablesByScope.tsx';

/**
 * A service's Variables tab: its definitions by scope (its own, its environment's, its project's, the built-ins), as
 * the environment's and the project's pages show theirs, switched with what the service receives at its next
 * deployment (VariablesByScope with ResolvedVariables).
 */
export function ServiceVariables({ context }: { context: ServiceContext }) {
  const level = {
    own: 'SERVICE',
    organizationId: context.organizationId,
    projectId: context.projectId,
    environmentId: context.environmentId,
    serviceBase: context.base,
    importThrough: { path: `${context.base}/environmentVariable/import`, serviceScope: context.kind.type },
  } as const;
  return <VariablesByScope level={level} />;
}
