import { authenticatedErrors } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { COMMIT_HISTORY_DEPTH, COMMITS_PER_ANSWER, CommitQuery, CommitResponseList, type CommitKind, type ServiceCommits } from './services.commits.ts';
import { kindDefinition } from './services.kinds.ts';
import { serviceParams } from './services.schemas.ts';

/** The reference's four commit listings, one per kind that builds from git. */
const COMMIT_ROUTES: ReadonlyArray<{ kind: CommitKind; operationId: string; tags: string[] }> = [
  { kind: 'APPLICATION', operationId: 'listApplicationCommit', tags: ['Application Main Calls'] },
  { kind: 'JOB', operationId: 'listJobCommit', tags: ['Job Main Calls'] },
  { kind: 'HELM', operationId: 'listHelmCommit', tags: ['Helm Main Calls'] },
  { kind: 'TERRAFORM', operationId: 'listTerraformCommit', tags: ['Terraform Main Calls'] },
];

export function registerServiceCommitRoutes(app: FastifyTypeBox, commits: ServiceCommits): void {
  for (const route of COMMIT_ROUTES) {
    const definition = kindDefinition(route.kind);
    app.get(
      `/${definition.item}/:${definition.idParam}/commit`,
      {
        schema: {
          operationId: route.operationId,
          summary: `List the last commits of the branch of ${definition.prose.aService}`,
          description:
            `The last ${COMMITS_PER_ANSWER} commits of the branch ${definition.prose.theService} builds from, newest first, read from the git ` +
            'host with its git token; gitCommitId starts the list at that commit, startId after it (within the last ' +
            `${COMMIT_HISTORY_DEPTH}). 400 when the service is not built from git, the commit is unknown, or the host ` +
            'refuses the token, cannot find the repository or branch, or cannot be reached.',
          tags: route.tags,
          params: serviceParams(definition),
          querystring: CommitQuery,
          response: { 200: CommitResponseList, ...authenticatedErrors() },
        },
        config: { access: { permission: 'services:read', target: 'service' } },
      },
      async (request) => ({
        results: await commits.listServiceCommits(route.kind, (request.params as Record<string, string>)[definition.idParam] as string, request.query),
      }),
    );
  }
}
