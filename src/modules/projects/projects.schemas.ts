import { Type } from 'typebox';
import { BaseFields, Description, ListOf, Name, Nullable, Uuid } from '../../protocol/wire.ts';

export const ProjectRequest = Type.Object(
  { name: Name, description: Type.Optional(Nullable(Description)) },
  { $id: 'ProjectRequest', additionalProperties: false, examples: [{ name: 'web-shop', description: 'The shop front, its API and their databases' }] },
);

export const Project = Type.Object(
  {
    ...BaseFields,
    name: Type.String(),
    description: Type.Optional(Type.String()),
    associated_environments_count: Type.Integer(),
    organization: Type.Object({ id: Uuid }),
  },
  {
    $id: 'Project',
    examples: [
      {
        id: '9a1e7c44-2b8d-4f36-8c51-6d0e3b2a7f18',
        created_at: '2026-03-02T09:20:03.118Z',
        updated_at: '2026-03-02T09:20:03.118Z',
        name: 'web-shop',
        description: 'The shop front, its API and their databases',
        associated_environments_count: 0,
        organization: { id: '3f6c2a8e-5b1d-4c7a-9e2f-1a4b6c8d0e12' },
      },
    ],
  },
);
export const ProjectResponseList = ListOf(Project, 'ProjectResponseList');

export const ProjectStats = Type.Object(
  { id: Uuid, service_total_number: Type.Integer(), environment_total_number: Type.Integer() },
  { $id: 'ProjectStats' },
);
export const ProjectStatsResponseList = ListOf(ProjectStats, 'ProjectStatsResponseList');

export const ProjectParams = Type.Object({ projectId: Uuid }, { additionalProperties: false });
