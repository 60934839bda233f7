import { Type } from 'typebox';
import { ListOf, Uuid } from '../../protocol/wire.ts';
import { EnvironmentStatus } from '../environments/environments.schemas.ts';
import { ServiceStatus } from '../services/services.deployments.schemas.ts';

/**
 * A service's status inside a schema that holds several lists of them: the same shape as ServiceStatus without its
 * name, since one schema may name a component once only (the validator refuses a repeated $id).
 */
const ServiceStatusItem = Type.Object(ServiceStatus.properties);

/** The status of every service of an environment, grouped by kind, with the environment's own (getEnvironmentStatuses). */
export const EnvironmentStatuses = Type.Object(
  {
    environment: EnvironmentStatus,
    applications: Type.Array(ServiceStatusItem),
    containers: Type.Array(ServiceStatusItem),
    jobs: Type.Array(ServiceStatusItem),
    databases: Type.Array(ServiceStatusItem),
    helms: Type.Array(ServiceStatusItem),
    terraforms: Type.Array(ServiceStatusItem),
    agentic_workflows: Type.Array(ServiceStatusItem),
  },
  { $id: 'EnvironmentStatuses' },
);

/** The reference's ReferenceObjectStatus: a service's status named by the service's id (`id` is both). */
export const ReferenceObjectStatusResponseList = ListOf(ServiceStatus, 'ReferenceObjectStatusResponseList');

export const EnvironmentStatusList = ListOf(EnvironmentStatus, 'EnvironmentStatusList');

/**
 * How many services each environment holds. The reference's schema requires `number` but describes
 * `service_total_number`: both are written, with the same count, so clients generated either way decode it.
 */
export const EnvironmentStats = Type.Object(
  {
    id: Uuid,
    service_total_number: Type.Integer({ minimum: 0 }),
    number: Type.Integer({ minimum: 0, description: 'The same count as service_total_number (the reference requires this name).' }),
  },
  { $id: 'EnvironmentStats' },
);
export const EnvironmentStatsResponseList = ListOf(EnvironmentStats, 'EnvironmentStatsResponseList');

export const EnvironmentStatusParams = Type.Object({ environmentId: Uuid });
export const ProjectStatusParams = Type.Object({ projectId: Uuid });
