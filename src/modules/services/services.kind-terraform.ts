import { Type, type Static } from 'typebox';
import { ListOf } from '../../protocol/wire.ts';
import { badRequest, type FieldProblem } from '../../lib/errors.ts';
import {
  GitRepositoryRequest,
  GitRepositoryResponse,
  gitSourceFrom,
  gitSourceResponse,
  LIMITS,
  ServiceDescription,
  ServiceName,
  serviceResponseBase,
  ServiceResponseFields,
  kindWrites,
  settingsOf,
  withoutDefaults,
  type StoredGitSource,
} from './services.kind-fields.ts';
import { IconUri } from './services.kind-workload.ts';
import type { ServiceKindContext, ServiceKindDefinition, StoredService } from './services.kinds.ts';

/**
 * TERRAFORM: a Terraform (or OpenTofu) root module in a git repository, planned and applied by a job of the
 * environment. The reference lists TERRAFORM among the service types but not its request; the shape follows the
 * original product's TerraformRequest in the reference's style. Rules (docs/service-kinds.md):
 * - the files come from git: `root_path` is the module's directory (listDirectoriesFromGitRepository lists them);
 * - input variables: var files inside the repository (`*.tfvars` / `*.tfvars.json`, relative paths) and plain
 *   `tf_vars`. There is no secret flag here: a secret input is a secret of the service named `TF_VAR_<name>`,
 *   which Terraform reads from the environment and which the variables module keeps encrypted;
 * - backend: the environment's Kubernetes secret backend, or the one the module's own `backend` block declares;
 * - engine TERRAFORM or OPEN_TOFU, its version read from the module's `required_version` or given explicitly;
 * - extra CLI arguments per action, but never the flags Slipway sets (working directory, state, var files).
 */

const DEFAULT_ICON = 'app://slipway-console/terraform';
const MAX_VARS = 200;
const MAX_VAR_FILES = 20;

export const TERRAFORM_ENGINES = ['TERRAFORM', 'OPEN_TOFU'] as const;
export type TerraformEngine = (typeof TERRAFORM_ENGINES)[number];

/**
 * The engine versions an explicit `provider_version` may name, newest first: the releases whose official images
 * (hashicorp/terraform, ghcr.io/opentofu/opentofu) the Kubernetes driver runs, one per minor line. listTerraformVersions
 * answers this table and the Terraform kind refuses any other version, so a service never names an image that the
 * driver cannot pull.
 */
export const TERRAFORM_VERSIONS: Readonly<Record<TerraformEngine, readonly string[]>> = {
  TERRAFORM: ['1.12.2', '1.11.4', '1.10.5', '1.9.8', '1.8.5', '1.7.5', '1.6.6', '1.5.7'],
  OPEN_TOFU: ['1.9.1', '1.9.0', '1.8.2', '1.7.3', '1.6.2'],
};
const ACTIONS = ['plan', 'apply', 'destroy'] as const;

/** Terraform's identifier rule for variable names. */
const VariableName = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z_][A-Za-z0-9_-]*$' });
const VarFilePath = Type.String({ minLength: 1, maxLength: 1024, pattern: '^[^\\x00-\\x1f\\x7f]+\\.tfvars(?:\\.json)?$' });
const EngineVersion = Type.String({ minLength: 1, maxLength: 32, pattern: '^\\d+\\.\\d+(?:\\.\\d+)?(?:-[0-9A-Za-z.]+)?$' });
const CliArgument = Type.String({ minLength: 2, maxLength: 1024, pattern: '^-[^\\x00-\\x1f\\x7f]*$' });

/** Flags Slipway passes itself, for every action. */
const RESERVED_FLAGS = new Set(['-chdir', '-state', '-state-out', '-backup', '-var-file', '-backend-config', '-lock', '-input', '-out', '-auto-approve']);

const terraformFields = {
  description: Type.Optional(ServiceDescription),
  auto_deploy: Type.Optional(Type.Boolean({ default: true })),
  terraform_files_source: Type.Object({ git_repository: GitRepositoryRequest }, { additionalProperties: false }),
  terraform_variables_source: Type.Optional(
    Type.Object(
      {
        tf_var_file_paths: Type.Optional(Type.Array(VarFilePath, { maxItems: MAX_VAR_FILES })),
        tf_vars: Type.Optional(Type.Array(Type.Object({ key: VariableName, value: Type.String({ maxLength: 16_384, pattern: '^[^\\x00]*$' }) }, { additionalProperties: false }), { maxItems: MAX_VARS })),
      },
      { additionalProperties: false },
    ),
  ),
  backend: Type.Optional(
    Type.Object(
      {
        kubernetes: Type.Optional(Type.Object({}, { additionalProperties: false })),
        user_provided: Type.Optional(Type.Object({}, { additionalProperties: false })),
      },
      { additionalProperties: false },
    ),
  ),
  engine: Type.Optional(Type.Enum(TERRAFORM_ENGINES, { default: 'TERRAFORM' })),
  provider_version: Type.Optional(
    Type.Object(
      { read_from_terraform_block: Type.Boolean(), explicit_version: Type.Optional(EngineVersion) },
      { additionalProperties: false },
    ),
  ),
  timeout_sec: Type.Optional(Type.Integer({ minimum: 60, maximum: 86_400, default: 1800 })),
  job_resources: Type.Optional(
    Type.Object(
      {
        cpu_milli: Type.Optional(Type.Integer({ minimum: LIMITS.cpuMillicores.min, maximum: LIMITS.cpuMillicores.max })),
        ram_mib: Type.Optional(Type.Integer({ minimum: LIMITS.memoryMib.min, maximum: LIMITS.memoryMib.max })),
        storage_gib: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024 })),
      },
      { additionalProperties: false },
    ),
  ),
  use_cluster_credentials: Type.Optional(Type.Boolean({ default: false })),
  action_extra_arguments: Type.Optional(
    Type.Object(
      { plan: Type.Optional(Type.Array(CliArgument, { maxItems: 50 })), apply: Type.Optional(Type.Array(CliArgument, { maxItems: 50 })), destroy: Type.Optional(Type.Array(CliArgument, { maxItems: 50 })) },
      { additionalProperties: false },
    ),
  ),
  icon_uri: Type.Optional(IconUri),
};

export const TerraformRequest = Type.Object(
  { name: ServiceName, ...terraformFields },
  {
    $id: 'TerraformRequest',
    additionalProperties: false,
    examples: [
      {
        name: 'cdn',
        description: 'The CDN in front of the shop',
        terraform_files_source: {
          git_repository: { url: 'https://github.com/acme/web-shop', provider: 'GITHUB', branch: 'main', root_path: '/infra/cdn' },
        },
        terraform_variables_source: { tf_var_file_paths: ['production.tfvars'], tf_vars: [{ key: 'domain', value: 'shop.acme.com' }] },
      },
    ],
  },
);
type TerraformBody = Static<typeof TerraformRequest>;
const TerraformEditRequest = Type.Object({ name: ServiceName, ...withoutDefaults(terraformFields) }, { $id: 'TerraformEditRequest', additionalProperties: false });
type TerraformEditBody = Static<typeof TerraformEditRequest>;

const Arguments = Type.Array(Type.String());

export const TerraformResponse = Type.Object(
  {
    ...ServiceResponseFields,
    auto_deploy: Type.Boolean(),
    terraform_files_source: Type.Object({ git_repository: GitRepositoryResponse }),
    terraform_variables_source: Type.Object({ tf_var_file_paths: Type.Array(Type.String()), tf_vars: Type.Array(Type.Object({ key: Type.String(), value: Type.String() })) }),
    backend: Type.Object({ kubernetes: Type.Optional(Type.Object({})), user_provided: Type.Optional(Type.Object({})) }),
    engine: Type.Enum(TERRAFORM_ENGINES),
    provider_version: Type.Object({ read_from_terraform_block: Type.Boolean(), explicit_version: Type.Optional(Type.String()) }),
    timeout_sec: Type.Integer(),
    job_resources: Type.Object({ cpu_milli: Type.Integer(), ram_mib: Type.Integer(), gpu: Type.Integer(), storage_gib: Type.Integer() }),
    use_cluster_credentials: Type.Boolean(),
    action_extra_arguments: Type.Object({ plan: Arguments, apply: Arguments, destroy: Arguments }),
    icon_uri: Type.String(),
    service_type: Type.Literal('TERRAFORM'),
  },
  {
    $id: 'TerraformResponse',
    examples: [
      {
        id: '1d9c5e7a-3f6b-4a08-9c2d-8e4f0b7a3d61',
        created_at: '2026-03-02T11:27:10.828Z',
        updated_at: '2026-03-02T11:27:10.828Z',
        environment: { id: '7c2e9a41-3b6d-4f18-a5c0-2e8d1b4f6a93' },
        name: 'cdn',
        description: 'The CDN in front of the shop',
        auto_deploy: true,
        terraform_files_source: {
          git_repository: {
            provider: 'GITHUB',
            owner: 'acme',
            url: 'https://github.com/acme/web-shop',
            name: 'web-shop',
            branch: 'main',
            root_path: '/infra/cdn',
            git_token_id: null,
          },
        },
        terraform_variables_source: { tf_var_file_paths: ['production.tfvars'], tf_vars: [{ key: 'domain', value: 'shop.acme.com' }] },
        backend: { kubernetes: {} },
        engine: 'TERRAFORM',
        provider_version: { read_from_terraform_block: true },
        timeout_sec: 1800,
        job_resources: { cpu_milli: 500, ram_mib: 512, gpu: 0, storage_gib: 1 },
        use_cluster_credentials: false,
        action_extra_arguments: { plan: [], apply: [], destroy: [] },
        icon_uri: 'app://slipway-console/terraform',
        service_type: 'TERRAFORM',
      },
    ],
  },
);
export const TerraformResponseList = ListOf(TerraformResponse, 'TerraformResponseList');

export interface TerraformSettings {
  auto_deploy: boolean;
  git_repository: StoredGitSource;
  tf_var_file_paths: string[];
  tf_vars: { key: string; value: string }[];
  backend: 'kubernetes' | 'user_provided';
  engine: (typeof TERRAFORM_ENGINES)[number];
  engine_version: string | null;
  timeout_sec: number;
  job_resources: { cpu_milli: number; ram_mib: number; storage_gib: number };
  use_cluster_credentials: boolean;
  action_extra_arguments: Record<(typeof ACTIONS)[number], string[]>;
  icon_uri: string;
}

function variablesFrom(source: NonNullable<TerraformEditBody['terraform_variables_source']>): Pick<TerraformSettings, 'tf_var_file_paths' | 'tf_vars'> {
  const problems: FieldProblem[] = [];
  const paths = (source.tf_var_file_paths ?? []).map((path, index) => {
    const segments = path.split('/').filter((segment) => segment !== '' && segment !== '.');
    if (path.startsWith('/') || segments.includes('..')) problems.push({ field: `/terraform_variables_source/tf_var_file_paths/${index}`, message: 'must be a relative path inside the root path, without ..' });
    return segments.join('/');
  });
  const keys = new Set<string>();
  (source.tf_vars ?? []).forEach((variable, index) => {
    if (keys.has(variable.key)) problems.push({ field: `/terraform_variables_source/tf_vars/${index}/key`, message: 'is set twice' });
    keys.add(variable.key);
  });
  if (problems.length > 0) throw badRequest('the Terraform variables are not valid', problems);
  return { tf_var_file_paths: paths, tf_vars: source.tf_vars ?? [] };
}

function backendFrom(backend: TerraformEditBody['backend'] | undefined, current: TerraformSettings['backend'] | undefined): TerraformSettings['backend'] {
  if (backend === undefined) return current ?? 'kubernetes';
  const chosen = (['kubernetes', 'user_provided'] as const).filter((kind) => backend[kind] !== undefined);
  if (chosen.length !== 1) throw badRequest('a Terraform service has exactly one backend', [{ field: '/backend', message: 'set exactly one of kubernetes, user_provided' }]);
  return chosen[0] as TerraformSettings['backend'];
}

function engineVersionFrom(
  engine: TerraformEngine,
  version: TerraformEditBody['provider_version'] | undefined,
  current: { engine: TerraformEngine; engine_version: string | null } | undefined,
): string | null {
  if (version === undefined) {
    const kept = current?.engine_version ?? null;
    // A version kept across a change of engine must be one the new engine has.
    if (kept !== null && current?.engine !== engine && !TERRAFORM_VERSIONS[engine].includes(kept)) {
      throw badRequest(`${engine} has no version ${kept}: give provider_version with the engine`, [
        { field: '/provider_version/explicit_version', message: `one of ${TERRAFORM_VERSIONS[engine].join(', ')}` },
      ]);
    }
    return kept;
  }
  if (version.read_from_terraform_block) {
    if (version.explicit_version !== undefined) throw badRequest('the version is read from the terraform block or given, not both', [{ field: '/provider_version/explicit_version', message: 'only when read_from_terraform_block is false' }]);
    return null;
  }
  if (version.explicit_version === undefined) throw badRequest('give explicit_version or read it from the terraform block', [{ field: '/provider_version/explicit_version', message: 'required when read_from_terraform_block is false' }]);
  if (!TERRAFORM_VERSIONS[engine].includes(version.explicit_version)) {
    throw badRequest(`${engine} ${version.explicit_version} is not a version Slipway runs (listTerraformVersions lists them)`, [
      { field: '/provider_version/explicit_version', message: `one of ${TERRAFORM_VERSIONS[engine].join(', ')}` },
    ]);
  }
  return version.explicit_version;
}

function extraArgumentsFrom(extra: NonNullable<TerraformEditBody['action_extra_arguments']>): TerraformSettings['action_extra_arguments'] {
  const problems: FieldProblem[] = [];
  const result = { plan: [] as string[], apply: [] as string[], destroy: [] as string[] };
  for (const action of ACTIONS) {
    const args = extra[action] ?? [];
    args.forEach((argument, index) => {
      const flag = (argument.split('=')[0] as string).replace(/^--/, '-');
      if (RESERVED_FLAGS.has(flag)) problems.push({ field: `/action_extra_arguments/${action}/${index}`, message: `${flag} is set by Slipway` });
    });
    result[action] = args;
  }
  if (problems.length > 0) throw badRequest('some Terraform arguments are reserved', problems);
  return result;
}

async function terraformSettings(body: TerraformEditBody, current: TerraformSettings | undefined, context: ServiceKindContext): Promise<TerraformSettings> {
  const variables = body.terraform_variables_source !== undefined ? variablesFrom(body.terraform_variables_source) : undefined;
  const resources = body.job_resources;
  return {
    auto_deploy: body.auto_deploy ?? current?.auto_deploy ?? true,
    git_repository: await gitSourceFrom(body.terraform_files_source.git_repository, context, '/terraform_files_source/git_repository'),
    tf_var_file_paths: variables?.tf_var_file_paths ?? current?.tf_var_file_paths ?? [],
    tf_vars: variables?.tf_vars ?? current?.tf_vars ?? [],
    backend: backendFrom(body.backend, current?.backend),
    engine: body.engine ?? current?.engine ?? 'TERRAFORM',
    engine_version: engineVersionFrom(body.engine ?? current?.engine ?? 'TERRAFORM', body.provider_version, current),
    timeout_sec: body.timeout_sec ?? current?.timeout_sec ?? 1800,
    job_resources: {
      cpu_milli: resources?.cpu_milli ?? current?.job_resources.cpu_milli ?? 500,
      ram_mib: resources?.ram_mib ?? current?.job_resources.ram_mib ?? 512,
      storage_gib: resources?.storage_gib ?? current?.job_resources.storage_gib ?? 1,
    },
    use_cluster_credentials: body.use_cluster_credentials ?? current?.use_cluster_credentials ?? false,
    action_extra_arguments: body.action_extra_arguments !== undefined ? extraArgumentsFrom(body.action_extra_arguments) : (current?.action_extra_arguments ?? { plan: [], apply: [], destroy: [] }),
    icon_uri: body.icon_uri ?? current?.icon_uri ?? DEFAULT_ICON,
  };
}

export const terraformKind: ServiceKindDefinition = {
  kind: 'TERRAFORM',
  collection: 'terraform',
  item: 'terraform',
  idParam: 'terraformId',
  gitSourceField: '/terraform_files_source/git_repository',
  operations: { list: 'listTerraforms', create: 'createTerraform', get: 'getTerraform', edit: 'editTerraform', delete: 'deleteTerraform' },
  operationNoun: 'Terraform',
  tags: ['Terraforms'],
  prose: {
    aService: 'a Terraform service',
    theService: 'the Terraform service',
    services: 'Terraform services',
    what: 'A Terraform service plans and applies the Terraform (or OpenTofu: engine) files of a git repository (terraform_files_source), its state kept on a backend: kubernetes, the default, or user_provided.',
    checks:
      "400 for two backends, a provider_version both read from the terraform block and given, or not one Slipway runs (listTerraformVersions lists them), a tf_var_file_path outside the root path or a tf_var set twice, or reserved Terraform arguments; 404 for a git token that is not the organization's.",
  },
  createBody: TerraformRequest,
  editBody: TerraformEditRequest,
  response: TerraformResponse,
  listResponse: TerraformResponseList,

  ...kindWrites<TerraformBody, TerraformEditBody, TerraformSettings>(terraformSettings),

  toResponse(service: StoredService): Static<typeof TerraformResponse> {
    const settings = settingsOf<TerraformSettings>(service.settings);
    return {
      ...serviceResponseBase(service),
      auto_deploy: settings.auto_deploy,
      terraform_files_source: { git_repository: gitSourceResponse(settings.git_repository) },
      terraform_variables_source: { tf_var_file_paths: settings.tf_var_file_paths, tf_vars: settings.tf_vars },
      backend: { [settings.backend]: {} },
      engine: settings.engine,
      provider_version:
        settings.engine_version === null ? { read_from_terraform_block: true } : { read_from_terraform_block: false, explicit_version: settings.engine_version },
      timeout_sec: settings.timeout_sec,
      // The reference requires `gpu`; Terraform runs get none here.
      job_resources: { ...settings.job_resources, gpu: 0 },
      use_cluster_credentials: settings.use_cluster_credentials,
      action_extra_arguments: settings.action_extra_arguments,
      icon_uri: settings.icon_uri,
      service_type: 'TERRAFORM',
    };
  },

  references(stored: Record<string, unknown>) {
    const settings = settingsOf<TerraformSettings>(stored);
    return {
      gitTokenId: settings.git_repository.git_token_id,
      containerRegistryId: null,
      helmRepositoryId: null,
      labelsGroupIds: [],
      annotationsGroupIds: [],
      branch: settings.git_repository.branch,
      publiclyReachable: false,
      internalPorts: [],
    };
  },
};
