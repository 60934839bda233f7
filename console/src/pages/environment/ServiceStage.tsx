import { api } from '../../api/client.ts';
import { KINDS } from '../../services/kinds.ts';
import { useLiveInterval } from '../live.ts';

export interface StageOfService {
  stage: string;
  /** The service's deployment requests still waiting or under way. */
  requests: number;
}

/** Each service's deployment stage (the order an environment deploy runs them in) and its waiting requests. */
export function useServiceStages(environmentId: string): Map<string, StageOfService> {
  const stages = api.useQuery('get', '/environment/{environmentId}/statusesWithStages', { params: { path: { environmentId } } }, { refetchInterval: useLiveInterval() });
  const byService = new Map<string, StageOfService>();
  for (const entry of stages.data?.stages ?? []) {
    for (const kind of KINDS) for (const service of entry[kind.statusKey]) byService.set(service.id, { stage: entry.stage.name, requests: service.deployment_requests_count });
  }
  return byService;
}

/** Beside a service's status: its stage, and how many of its requests wait when more than the one shown. */
export function ServiceStageNote({ stage }: { stage: StageOfService | undefined }) {
  if (stage === undefined) return null;
  return (
    <span className="stage-note">
      <span className="muted">Stage</span> {stage.stage.toLowerCase()}
      {stage.requests > 1 ? <span className="tag">{stage.requests} requests queued</span> : null}
    </span>
  );
}
