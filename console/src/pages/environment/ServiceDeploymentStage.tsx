import { api, messageOf } from '../../api/client.ts';

/**
 * A service's deployment stage as a row of the service page's facts (`<dl className="facts">`): where its
 * environment's deploy starts it. The stages themselves are arranged on the environment's page.
 */
export function ServiceDeploymentStageFact({ serviceId }: { serviceId: string }) {
  const stage = api.useQuery('get', '/service/{serviceId}/deploymentStage', { params: { path: { serviceId } } });
  if (stage.isPending) return null;
  return (
    <div>
      <dt>Deployment stage</dt>
      <dd>{stage.data === undefined ? <span className="muted">unknown ({messageOf(stage.error)})</span> : `${stage.data.name} (stage ${stage.data.deployment_order + 1})`}</dd>
    </div>
  );
}
