import { Type } from 'typebox';
import { BaseFields, Description, ListOf, Name, Nullable, Uuid } from '../../protocol/wire.ts';

export const ProjectRequest = Type.Object(
  { name: Name, description: Type.Optional(Nullable(Description)) },
  { $id: 'ProjectRequest', additionalProperties: false },
);

export const Project = Type.Object(
  {
    ...BaseFields,
    name: Type.String(),
    description: Type.Optional(Type.String()),
    associated_environments_count: Type.Integer(),
    organization: Type.Object({ id: Uuid }),
  },
  { $id: 'Project' },
);
export const ProjectResponseList = ListOf(Project, 'ProjectResponseList');

export const ProjectStats = Type.Object(
  { id: Uuid, service_total_number: Type.Integer(), environment_total_number: Type.Integer() },
  { $id: 'ProjectStats' },
);
export const ProjectStatsResponseList = ListOf(ProjectStats, 'ProjectStatsResponseList');

export const ProjectParams = Type.Object({ projectId: Uuid }, { additionalProperties: false });
