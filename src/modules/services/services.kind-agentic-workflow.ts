import { Type, type Static } from 'typebox';
import { ListOf, Nullable } from '../../protocol/wire.ts';
import { badRequest, type FieldProblem } from '../../lib/errors.ts';
import { RESERVED_PREFIX } from '../variables/variables.builtins.ts';
import {
  GitRepositoryRequest,
  GitRepositoryResponse,
  gitSourceFrom,
  gitSourceResponse,
  Line,
  ResourceRequestFields,
  ServiceDescription,
  ServiceName,
  serviceResponseBase,
  ServiceResponseFields,
  kindWrites,
  settingsOf,
  withoutDefaults,
  type StoredGitSource,
} from './services.kind-fields.ts';
import { cronExpressionFrom, timezoneFrom } from './services.kind-job.ts';
import { IconUri } from './services.kind-workload.ts';
import type { ServiceKindContext, ServiceKindDefinition, StoredService } from './services.kinds.ts';

/**
 * AGENTIC_WORKFLOW: an LLM agent run by the environment — instructions, a model of a provider, the tools it may
 * call, and when it runs. The reference names the service type only; this shape is Slipway's, in the reference's
 * style. Rules (docs/service-kinds.md):
 * - the model is a *reference*: provider, model name, endpoint, and the name of the service secret holding the
 *   API key (`api_key_variable`, set through the workflow's secret endpoints, encrypted by the variables module);
 *   a key is never part of this body. OLLAMA and OPENAI_COMPATIBLE need a base_url; every provider but OLLAMA
 *   needs an api_key_variable;
 * - tools: HTTP endpoints (with their method) and MCP servers, by unique snake_case names, at most 32;
 * - an optional git repository checked out as the agent's workspace (a deploy may name its commit);
 * - schedule: a cron expression as for jobs (five fields, croner, IANA timezone), or none: it then runs when
 *   deployed;
 * - bounds on a run: max_steps (model calls) and max_duration_seconds.
 */

const DEFAULT_ICON = 'app://slipway-console/agentic-workflow';
const MAX_TOOLS = 32;

export const MODEL_PROVIDERS = ['ANTHROPIC', 'OPENAI', 'MISTRAL', 'OLLAMA', 'OPENAI_COMPATIBLE'] as const;
type ModelProvider = (typeof MODEL_PROVIDERS)[number];
const NEEDS_BASE_URL: ReadonlySet<ModelProvider> = new Set(['OLLAMA', 'OPENAI_COMPATIBLE']);
const KEYLESS: ReadonlySet<ModelProvider> = new Set(['OLLAMA']);

const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const TOOL_TYPES = ['HTTP', 'MCP'] as const;

const Endpoint = Type.String({ minLength: 1, maxLength: 2048, pattern: '^https?://[^\\x00-\\x20\\x7f]+$' });
const VariableName = Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z_][A-Za-z0-9_]*$' });

const ModelRequest = Type.Object(
  {
    provider: Type.Enum(MODEL_PROVIDERS),
    model: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9._:/@-]*$' }),
    base_url: Type.Optional(Nullable(Endpoint)),
    api_key_variable: Type.Optional(Nullable(VariableName)),
  },
  { additionalProperties: false },
);

const ToolRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z][a-z0-9_]*$' }),
    type: Type.Enum(TOOL_TYPES),
    description: Type.Optional(Line(1024)),
    url: Endpoint,
    method: Type.Optional(Type.Enum(HTTP_METHODS)),
  },
  { additionalProperties: false },
);

const ScheduleRequest = Type.Object({ scheduled_at: Line(255, 1), timezone: Type.Optional(Line(64, 1)) }, { additionalProperties: false });

const workflowFields = {
  description: Type.Optional(ServiceDescription),
  model: ModelRequest,
  instructions: Type.String({ minLength: 1, maxLength: 32_768, pattern: '^[^\\x00]*$' }),
  tools: Type.Optional(Type.Array(ToolRequest, { maxItems: MAX_TOOLS })),
  git_repository: Type.Optional(Nullable(GitRepositoryRequest)),
  schedule: Type.Optional(Nullable(ScheduleRequest)),
  max_steps: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  max_duration_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400, default: 900 })),
  ...ResourceRequestFields,
  auto_deploy: Type.Optional(Type.Boolean({ default: true })),
  icon_uri: Type.Optional(IconUri),
};

export const AgenticWorkflowRequest = Type.Object(
  { name: ServiceName, ...workflowFields },
  {
    $id: 'AgenticWorkflowRequest',
    additionalProperties: false,
    examples: [
      {
        name: 'issue-triage',
        description: 'Labels new issues every morning',
        model: { provider: 'ANTHROPIC', model: 'claude-sonnet-4', api_key_variable: 'ANTHROPIC_API_KEY' },
        instructions: 'Read the issues opened since yesterday and label each one bug, feature or question.',
        tools: [
          {
            name: 'issues',
            type: 'HTTP',
            description: 'The issue tracker',
            url: 'https://tracker.acme.com/api/issues',
            method: 'GET',
          },
        ],
        schedule: { scheduled_at: '0 7 * * 1-5', timezone: 'Europe/Paris' },
        max_steps: 20,
        max_duration_seconds: 300,
      },
    ],
  },
);
type WorkflowBody = Static<typeof AgenticWorkflowRequest>;
const AgenticWorkflowEditRequest = Type.Object({ name: ServiceName, ...withoutDefaults(workflowFields) }, { $id: 'AgenticWorkflowEditRequest', additionalProperties: false });
type WorkflowEditBody = Static<typeof AgenticWorkflowEditRequest>;

export const AgenticWorkflowResponse = Type.Object(
  {
    ...ServiceResponseFields,
    model: Type.Object({ provider: Type.Enum(MODEL_PROVIDERS), model: Type.String(), base_url: Nullable(Type.String()), api_key_variable: Nullable(Type.String()) }),
    instructions: Type.String(),
    tools: Type.Array(Type.Object({ name: Type.String(), type: Type.Enum(TOOL_TYPES), description: Nullable(Type.String()), url: Type.String(), method: Nullable(Type.Enum(HTTP_METHODS)) })),
    git_repository: Nullable(GitRepositoryResponse),
    schedule: Nullable(Type.Object({ scheduled_at: Type.String(), timezone: Type.String() })),
    max_steps: Type.Integer(),
    max_duration_seconds: Type.Integer(),
    cpu: Type.Integer(),
    memory: Type.Integer(),
    auto_deploy: Type.Boolean(),
    icon_uri: Type.String(),
    service_type: Type.Literal('AGENTIC_WORKFLOW'),
  },
  {
    $id: 'AgenticWorkflowResponse',
    examples: [
      {
        id: '8b2f6d4a-0c9e-4d57-b1a8-6e3c9f5d2b74',
        created_at: '2026-03-02T11:27:11.452Z',
        updated_at: '2026-03-02T11:27:11.452Z',
        environment: { id: '7c2e9a41-3b6d-4f18-a5c0-2e8d1b4f6a93' },
        name: 'issue-triage',
        description: 'Labels new issues every morning',
        model: { provider: 'ANTHROPIC', model: 'claude-sonnet-4', base_url: null, api_key_variable: 'ANTHROPIC_API_KEY' },
        instructions: 'Read the issues opened since yesterday and label each one bug, feature or question.',
        tools: [
          {
            name: 'issues',
            type: 'HTTP',
            description: 'The issue tracker',
            url: 'https://tracker.acme.com/api/issues',
            method: 'GET',
          },
        ],
        git_repository: null,
        schedule: { scheduled_at: '0 7 * * 1-5', timezone: 'Europe/Paris' },
        max_steps: 20,
        max_duration_seconds: 300,
        cpu: 500,
        memory: 512,
        auto_deploy: true,
        icon_uri: 'app://slipway-console/agentic-workflow',
        service_type: 'AGENTIC_WORKFLOW',
      },
    ],
  },
);
export const AgenticWorkflowResponseList = ListOf(AgenticWorkflowResponse, 'AgenticWorkflowResponseList');

interface StoredTool {
  name: string;
  type: (typeof TOOL_TYPES)[number];
  description: string | null;
  url: string;
  method: (typeof HTTP_METHODS)[number] | null;
}

export interface AgenticWorkflowSettings {
  model: { provider: ModelProvider; model: string; base_url: string | null; api_key_variable: string | null };
  instructions: string;
  tools: StoredTool[];
  git_repository: StoredGitSource | null;
  schedule: { scheduled_at: string; timezone: string } | null;
  max_steps: number;
  max_duration_seconds: number;
  cpu: number;
  memory: number;
  auto_deploy: boolean;
  icon_uri: string;
}

/** An endpoint the runner calls: http(s), no credentials (they belong in secrets), no fragment. */
function endpointProblem(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute http(s) URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http(s) URL';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials; keep them in a secret of the service';
  if (url.hash !== '') return 'must not have a fragment';
  return undefined;
}

function modelFrom(model: WorkflowEditBody['model']): AgenticWorkflowSettings['model'] {
  const problems: FieldProblem[] = [];
  const baseUrl = model.base_url ?? null;
  const keyVariable = model.api_key_variable ?? null;
  if (NEEDS_BASE_URL.has(model.provider) && baseUrl === null) problems.push({ field: '/model/base_url', message: `required for ${model.provider}` });
  if (baseUrl !== null) {
    const problem = endpointProblem(baseUrl);
    if (problem !== undefined) problems.push({ field: '/model/base_url', message: problem });
  }
  if (!KEYLESS.has(model.provider) && keyVariable === null) problems.push({ field: '/model/api_key_variable', message: `required for ${model.provider}: the name of the secret holding the API key` });
  if (keyVariable !== null && keyVariable.toUpperCase().startsWith(RESERVED_PREFIX)) {
    problems.push({ field: '/model/api_key_variable', message: `${RESERVED_PREFIX} names are built-in variables, not secrets` });
  }
  if (problems.length > 0) throw badRequest('the model reference is not valid', problems);
  return { provider: model.provider, model: model.model, base_url: baseUrl, api_key_variable: keyVariable };
}

function toolsFrom(tools: NonNullable<WorkflowEditBody['tools']>): StoredTool[] {
  const problems: FieldProblem[] = [];
  const names = new Set<string>();
  const stored = tools.map((tool, index): StoredTool => {
    if (names.has(tool.name)) problems.push({ field: `/tools/${index}/name`, message: 'is used by another tool' });
    names.add(tool.name);
    const problem = endpointProblem(tool.url);
    if (problem !== undefined) problems.push({ field: `/tools/${index}/url`, message: problem });
    if (tool.type === 'MCP' && tool.method !== undefined) problems.push({ field: `/tools/${index}/method`, message: 'only HTTP tools have a method' });
    return { name: tool.name, type: tool.type, description: tool.description ?? null, url: tool.url, method: tool.type === 'HTTP' ? (tool.method ?? 'POST') : null };
  });
  if (problems.length > 0) throw badRequest('the tools are not valid', problems);
  return stored;
}

async function workflowSettings(body: WorkflowEditBody, current: AgenticWorkflowSettings | undefined, context: ServiceKindContext): Promise<AgenticWorkflowSettings> {
  let schedule = current?.schedule ?? null;
  if (body.schedule !== undefined) {
    if (body.schedule === null) schedule = null;
    else {
      const timezone = timezoneFrom(body.schedule.timezone, '/schedule/timezone');
      schedule = { scheduled_at: cronExpressionFrom(body.schedule.scheduled_at, timezone, '/schedule/scheduled_at'), timezone };
    }
  }
  let git = current?.git_repository ?? null;
  if (body.git_repository !== undefined) git = body.git_repository === null ? null : await gitSourceFrom(body.git_repository, context, '/git_repository');
  return {
    model: modelFrom(body.model),
    instructions: body.instructions,
    tools: body.tools !== undefined ? toolsFrom(body.tools) : (current?.tools ?? []),
    git_repository: git,
    schedule,
    max_steps: body.max_steps ?? current?.max_steps ?? 50,
    max_duration_seconds: body.max_duration_seconds ?? current?.max_duration_seconds ?? 900,
    cpu: body.cpu ?? current?.cpu ?? 500,
    memory: body.memory ?? current?.memory ?? 512,
    auto_deploy: body.auto_deploy ?? current?.auto_deploy ?? true,
    icon_uri: body.icon_uri ?? current?.icon_uri ?? DEFAULT_ICON,
  };
}

export const agenticWorkflowKind: ServiceKindDefinition = {
  kind: 'AGENTIC_WORKFLOW',
  collection: 'agenticWorkflow',
  item: 'agenticWorkflow',
  idParam: 'agenticWorkflowId',
  gitSourceField: '/git_repository',
  operations: {
    list: 'listAgenticWorkflows',
    create: 'createAgenticWorkflow',
    get: 'getAgenticWorkflow',
    edit: 'editAgenticWorkflow',
    delete: 'deleteAgenticWorkflow',
  },
  operationNoun: 'AgenticWorkflow',
  tags: ['Agentic Workflows'],
  prose: {
    aService: 'an agentic workflow',
    theService: 'the agentic workflow',
    services: 'agentic workflows',
    what: "An agentic workflow runs an LLM agent: its instructions, a model of a provider (the API key is read from the workflow's secret named by api_key_variable, never from this body), the HTTP and MCP tools it may call, an optional git repository as its workspace, and a cron schedule or none (it then runs when deployed).",
    checks: "400 for a model without the base_url its provider needs (OLLAMA, OPENAI_COMPATIBLE) or without an api_key_variable (every provider but OLLAMA), two tools of one name, a method on an MCP tool, or a cron expression or time zone that is not valid; 404 for a git token that is not the organization's.",
  },
  createBody: AgenticWorkflowRequest,
  editBody: AgenticWorkflowEditRequest,
  response: AgenticWorkflowResponse,
  listResponse: AgenticWorkflowResponseList,

  ...kindWrites<WorkflowBody, WorkflowEditBody, AgenticWorkflowSettings>(workflowSettings),

  toResponse(service: StoredService): Static<typeof AgenticWorkflowResponse> {
    const settings = settingsOf<AgenticWorkflowSettings>(service.settings);
    return {
      ...serviceResponseBase(service),
      model: settings.model,
      instructions: settings.instructions,
      tools: settings.tools,
      git_repository: settings.git_repository === null ? null : gitSourceResponse(settings.git_repository),
      schedule: settings.schedule,
      max_steps: settings.max_steps,
      max_duration_seconds: settings.max_duration_seconds,
      cpu: settings.cpu,
      memory: settings.memory,
      auto_deploy: settings.auto_deploy,
      icon_uri: settings.icon_uri,
      service_type: 'AGENTIC_WORKFLOW',
    };
  },

  references(stored: Record<string, unknown>) {
    const settings = settingsOf<AgenticWorkflowSettings>(stored);
    return {
      gitTokenId: settings.git_repository?.git_token_id ?? null,
      containerRegistryId: null,
      helmRepositoryId: null,
      labelsGroupIds: [],
      annotationsGroupIds: [],
      branch: settings.git_repository?.branch ?? null,
      publiclyReachable: false,
      internalPorts: [],
    };
  },
};
