import { Type } from 'typebox';
import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import { sendDownload } from '../../http/downloads.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { NoContent, OrganizationParams, Uuid } from '../../protocol/wire.ts';
import { DeploymentBuildUsageReportRequest, DeploymentBuildUsageReportResponse, type BuildUsageReports } from './service-insights.build-usage.ts';
import type { EnvironmentExport } from './service-insights.export.ts';
import {
  CONTRIBUTOR_HISTORY_DEPTH,
  TerraformVariableDefinitionList,
  TerraformVariableParsingRequest,
  TfVarsFileResponseList,
  TfVarsListRequest,
  UserResponseList,
  type ServiceGitInsights,
} from './service-insights.git.ts';
import { TerraformResourcesResponse, type TerraformResources } from './service-insights.terraform.ts';

export interface ServiceInsightsRoutes {
  git: ServiceGitInsights;
  terraformResources: TerraformResources;
  environmentExport: EnvironmentExport;
  buildUsageReports: BuildUsageReports;
}

const ReportParams = Type.Object({ environmentId: Uuid, reportId: Uuid }, { additionalProperties: false });

const GIT_ERRORS =
  'The repository is read at the head of the branch with the git token, when given. 400 when the URL is not allowed, the ' +
  'branch, repository or root_path cannot be read, the token is refused, or a file does not parse (the message names ' +
  'the file and line); 404 for a git token that is not the organization’s.';

/** What Slipway reads of repositories and records for a service's pages (docs/service-insights.md). */
export function registerServiceInsightsRoutes(app: FastifyTypeBox, insights: ServiceInsightsRoutes): void {
  app.get(
    '/application/:applicationId/contributor',
    {
      schema: {
        operationId: 'listApplicationContributor',
        summary: "List the people who committed to the application's branch",
        description:
          `The authors of the last ${CONTRIBUTOR_HISTORY_DEPTH} commits of the branch the application builds from, read from ` +
          'the git host with its git token, most commits first, each with the dates of their oldest and newest commit ' +
          'there. Authors are told apart by name (git history carries no account). 400 when the application is not built ' +
          'from git, or the host refuses the token or cannot find the repository or branch; 404 for an unknown application.',
        tags: ['Application Main Calls'],
        params: Type.Object({ applicationId: Uuid }, { additionalProperties: false }),
        response: { 200: UserResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:read', target: 'service' } },
    },
    async (request) => ({ results: await insights.git.listApplicationContributors(request.params.applicationId) }),
  );

  app.post(
    '/organization/:organizationId/listTfVarsFilesFromGitRepo',
    {
      schema: {
        operationId: 'listTfVarsFilesFromGitRepo',
        summary: 'Read the .tfvars files of a Terraform module in a repository',
        description:
          'The variable files at root_path: every .tfvars and .tfvars.json file there (AutoDiscover), or the given paths ' +
          'relative to root_path (SpecificPaths, each of which must be a file), each with its assignments — a string as ' +
          `its value, any other expression as written. ${GIT_ERRORS}`,
        tags: ['Organization Main Calls'],
        params: OrganizationParams,
        body: TfVarsListRequest,
        response: { 200: TfVarsFileResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:create', target: 'organization' } },
    },
    async (request) => ({ results: await insights.git.listTfVarsFiles(request.params.organizationId, request.body) }),
  );

  app.post(
    '/organization/:organizationId/parseTerraformVariablesFromGitRepo',
    {
      schema: {
        operationId: 'parseTerraformVariablesFromGitRepo',
        summary: 'Read the variables a Terraform module in a repository declares',
        description:
          'The variable blocks of the .tf files at root_path, file by file in name order: each name with its default (a ' +
          'string as its value, any other expression as written, null without one), description, nullable and sensitive, ' +
          `and the file declaring it. 400 also when there is no .tf file there or a variable is declared twice. ${GIT_ERRORS}`,
        tags: ['Organization Main Calls'],
        params: OrganizationParams,
        body: TerraformVariableParsingRequest,
        response: { 200: TerraformVariableDefinitionList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:create', target: 'organization' } },
    },
    async (request) => ({ results: await insights.git.parseTerraformVariables(request.params.organizationId, request.body) }),
  );

  app.get(
    '/terraform/:terraformId/terraformResources',
    {
      schema: {
        operationId: 'getTerraformResources',
        summary: 'List the resources a Terraform service manages',
        description:
          "The resources of the service's Terraform state as Slipway recorded them from its last apply. The state itself " +
          'stays in its backend (on Kubernetes, a Secret of the environment’s namespace) and is not read back yet, so ' +
          'the list is empty (docs/service-insights.md). 404 for an unknown Terraform service.',
        tags: ['Terraform Resources'],
        params: Type.Object({ terraformId: Uuid }, { additionalProperties: false }),
        response: { 200: TerraformResourcesResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:read', target: 'service' } },
    },
    async (request) => ({ results: await insights.terraformResources.listTerraformResources(request.params.terraformId) }),
  );

  app.get(
    '/environment/:environmentId/terraformExport',
    {
      schema: {
        operationId: 'exportEnvironmentConfigurationIntoTerraform',
        summary: 'Export the environment as Terraform configuration',
        description:
          'One .tf file: the provider, the environment and each of its services as resources whose arguments are the ' +
          "fields of the API's create requests, the services referring to the environment resource. Variables are not " +
          'exported, so exportSecrets changes nothing (no secret value is ever written). 404 for an unknown environment.',
        tags: ['Environment Export'],
        params: Type.Object({ environmentId: Uuid }, { additionalProperties: false }),
        querystring: Type.Object({ exportSecrets: Type.Optional(Type.Boolean({ default: false })) }, { additionalProperties: false }),
        produces: ['application/octet-stream'],
        response: {
          200: { description: 'The Terraform file', content: { 'application/octet-stream': { schema: Type.String({ format: 'binary' }) } } },
          ...authenticatedErrors(),
        },
      },
      config: { access: { permission: 'environments:read', target: 'environment' } },
    },
    async (request, reply) => {
      const file = await insights.environmentExport.exportEnvironment(request.params.environmentId);
      return sendDownload(reply, 'application/octet-stream', file);
    },
  );

  app.post(
    '/environment/:environmentId/deploymentBuildUsageReport',
    {
      schema: {
        operationId: 'generateDeploymentBuildUsageReport',
        summary: 'Write the build usage report of a deployment',
        description:
          'A CSV of the service deployments one execution ran (an environment action and its fan-out, or one service’s ' +
          'deployment): service, action, outcome, when each was queued and finished and how long it took. It is kept for ' +
          'report_expiration_in_seconds (at most 7 days) at report_url, and removed earlier with DELETE on ' +
          'delete_report_url. 400 for an execution id no deployment of the environment has, or a lifetime out of range; ' +
          '404 for an unknown environment.',
        tags: ['Environment Deployment History'],
        params: Type.Object({ environmentId: Uuid }, { additionalProperties: false }),
        body: DeploymentBuildUsageReportRequest,
        response: { 201: DeploymentBuildUsageReportResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:read', target: 'environment' } },
    },
    async (request, reply) => reply.code(HTTP_STATUS.created).send(await insights.buildUsageReports.generateReport(request.params.environmentId, request.body)),
  );

  app.get(
    '/environment/:environmentId/deploymentBuildUsageReport/:reportId',
    {
      schema: {
        operationId: 'downloadDeploymentBuildUsageReport',
        summary: 'Download a build usage report',
        description: 'The CSV behind a report_url. 404 once it expired or was deleted, or for a report of another environment.',
        tags: ['Environment Deployment History'],
        params: ReportParams,
        produces: ['text/csv'],
        response: { 200: { description: 'The report', content: { 'text/csv': { schema: Type.String() } } }, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:read', target: 'environment' } },
    },
    async (request, reply) => {
      const file = await insights.buildUsageReports.downloadReport(request.params.environmentId, request.params.reportId);
      return sendDownload(reply, 'text/csv; charset=utf-8', file);
    },
  );

  app.delete(
    '/environment/:environmentId/deploymentBuildUsageReport/:reportId',
    {
      schema: {
        operationId: 'deleteDeploymentBuildUsageReport',
        summary: 'Delete a build usage report',
        description: 'Removes the report behind a delete_report_url before it expires. 404 once it expired or was deleted.',
        tags: ['Environment Deployment History'],
        params: ReportParams,
        response: { 204: NoContent, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:read', target: 'environment' } },
    },
    async (request, reply) => {
      await insights.buildUsageReports.deleteReport(request.params.environmentId, request.params.reportId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );
}
