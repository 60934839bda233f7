import { Type } from 'typebox';
import { BaseFields, ListOf, Nullable, Uuid } from '../../http/schema.ts';

/**
 * The shared Name and Description (http/schema.ts), minus control characters: PostgreSQL text cannot hold NUL
 * (storing one is a server error there, while SQLite keeps it), and a name is one line of printable text. The
 * name pattern is "optional non-control spaces, one printable character, then printable text": its parts cannot
 * overlap, so it runs in linear time whatever the input length.
 */
const ProjectName = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[^\\S\\x00-\\x1f\\x7f]*[^\\s\\x00-\\x1f\\x7f][^\\x00-\\x1f\\x7f]*$',
});
const ProjectDescription = Type.String({ maxLength: 2000, pattern: '^[^\\x00]*$' });

export const ProjectRequest = Type.Object(
  { name: ProjectName, description: Type.Optional(Nullable(ProjectDescription)) },
  { $id: 'ProjectRequest', additionalProperties: false },
);

export const Project = Type.Object(
  {
    ...BaseFields,
    name: Type.String(),
    description: Nullable(Type.String()),
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
