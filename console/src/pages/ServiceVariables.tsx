import { useState } from 'react';
import { Button } from '../ui/controls.tsx';
import { ResolvedVariables } from './ResolvedVariables.tsx';
import type { ServiceContext } from './ServicePage.tsx';
import { VariablesByScope } from './VariablesByScope.tsx';

/**
 * A service's Variables tab: its definitions by scope (its own, its environment's, its project's, the built-ins:
 * VariablesByScope, as the environment's and the project's pages show theirs), or what the service receives at its
 * next deployment (ResolvedVariables).
 */
export function ServiceVariables({ context }: { context: ServiceContext }) {
  const [view, setView] = useState<'definitions' | 'resolved'>('definitions');
  const level = {
    own: 'SERVICE',
    organizationId: context.organizationId,
    projectId: context.projectId,
    environmentId: context.environmentId,
    serviceBase: context.base,
    importThrough: { path: `${context.base}/environmentVariable/import`, serviceScope: context.kind.type },
  } as const;
  return (
    <VariablesByScope level={level}>
      {(definitions) => (
        <>
          <div className="view-switch" role="group" aria-label="Show">
            <Button variant="secondary" aria-pressed={view === 'definitions'} onPress={() => setView('definitions')}>
              Definitions by scope
            </Button>
            <Button variant="secondary" aria-pressed={view === 'resolved'} onPress={() => setView('resolved')}>
              What the service receives
            </Button>
          </div>
          {view === 'resolved' ? (
            <>
              <p className="muted section-intro-below">Each name as the next deployment receives it: the scope that won, the aliases followed to its value, and what it overrides.</p>
              <ResolvedVariables context={context} />
            </>
          ) : (
            definitions
          )}
        </>
      )}
    </VariablesByScope>
  );
}
