import { Type, type Static } from 'typebox';
import { badRequest, notFound } from '../../lib/errors.ts';
import { Uuid } from '../../protocol/wire.ts';
import { chartAt, type GitFiles } from '../services/services.git-files.ts';
import { gitSourceResponse, GitRepositoryRequest, GitRepositoryResponse, ImageName, ImageTag } from '../services/services.kind-fields.ts';

/**
 * What a form asks before a service is created in an environment (docs/service-extras.md "Environment checks"): does
 * the image exist in the registry (checkContainerImage), is there a Dockerfile at that path of the branch and what does
 * it build from (checkDockerfile), do these files exist there (checkGitFile), is there a Helm chart there
 * (checkHelmRepository). Each one reads the source the way a deployment would — the registries module's client with
 * the registry's stored login, the git access's checkout with the git token — and keeps nothing.
 *
 * A check whose subject is simply absent answers 200 saying so (checkContainerImage, checkGitFile), except where the
 * answer is a reading of the file (checkDockerfile, checkHelmRepository): there a missing or unreadable file is a 400
 * naming the field. A source that cannot be read at all (unknown registry or token: 404; refused login, unknown
 * branch or repository: 400) fails as it would at deployment.
 */

/** The reference's request spells its required field `registry_d`; Slipway requires the `registry_id` it defines. */
export const ContainerImageCheckRequest = Type.Object(
  { registry_id: Uuid, image_name: ImageName, tag: ImageTag },
  { $id: 'ContainerImageCheckRequest', additionalProperties: false },
);
export const ContainerImageCheckResponse = Type.Object(
  {
    registry_id: Uuid,
    image_name: Type.String(),
    tag: Type.String(),
    exists: Type.Boolean({ description: "Whether the registry lists the tag among the image's tags." }),
  },
  { $id: 'ContainerImageCheckResponse', additionalProperties: false },
);

/** A path of the repository relative to the source's root path, as a form names it (`Dockerfile`, `docker/app.Dockerfile`). */
const RepositoryFilePath = Type.String({ minLength: 1, maxLength: 4096, pattern: '^[^\\x00-\\x1f\\x7f]+$' });

export const DockerfileCheckRequest = Type.Object(
  { git_repository: GitRepositoryRequest, dockerfile_path: RepositoryFilePath },
  { $id: 'DockerfileCheckRequest', additionalProperties: false },
);
export const DockerfileCheckResponse = Type.Object(
  {
    git_repository: GitRepositoryResponse,
    dockerfile_path: Type.String(),
    arg: Type.Array(Type.String(), { description: 'The build arguments the Dockerfile declares (its ARG names), in order.' }),
    repositories: Type.Array(Type.String(), { description: 'The images its stages build FROM, in order, without its own stages and scratch.' }),
  },
  { $id: 'DockerfileCheckResponse', additionalProperties: false },
);

const MAX_CHECKED_FILES = 50;
export const GitFileCheckRequest = Type.Object(
  { git_repository: GitRepositoryRequest, files: Type.Array(RepositoryFilePath, { minItems: 1, maxItems: MAX_CHECKED_FILES }) },
  { $id: 'GitFileCheckRequest', additionalProperties: false },
);
export const GitFileCheckResponse = Type.Object(
  {
    git_repository: GitRepositoryResponse,
    files: Type.Array(Type.Object({ path: Type.String(), exists: Type.Boolean() }, { additionalProperties: false })),
  },
  { $id: 'GitFileCheckResponse', additionalProperties: false },
);

export const HelmCheckRequest = Type.Object({ git_repository: GitRepositoryRequest }, { $id: 'HelmCheckRequest', additionalProperties: false });
export const HelmCheckResponse = Type.Object(
  {
    git_repository: GitRepositoryResponse,
    chart_name: Type.String({ description: "Chart.yaml's name." }),
    chart_version: Type.String({ description: "Chart.yaml's version." }),
    app_version: Type.Optional(Type.String({ description: "Chart.yaml's appVersion, when it has one." })),
    has_default_values: Type.Boolean({ description: 'Whether the chart has a values.yaml beside its Chart.yaml.' }),
  },
  { $id: 'HelmCheckResponse', additionalProperties: false },
);

export interface EnvironmentChecksDeps {
  /** The organization of the environment (the authorizer already admitted the caller to it). */
  organizationOf(environmentId: string): Promise<string | undefined>;
  registries: {
    /** The registries module's tag listing: 404 for a registry the organization does not have, 400 when it refuses. */
    getContainerVersions(organizationId: string, registryId: string, query: { image_name: string }): Promise<Array<{ image_name: string; versions: string[] }>>;
  };
  gitFiles: GitFiles;
}

/** `a/./b` and `a/../b` are not names a form gives; a path leaving the repository is refused outright. */
function checkedPath(file: string, field: string): string {
  const segments = file.split('/').filter((segment) => segment !== '');
  if (segments.length === 0 || segments.some((segment) => segment === '.' || segment === '..')) {
    throw badRequest(`"${file}" is not a path inside the repository`, [{ field, message: 'must name a file without . or .. segments' }]);
  }
  return segments.join('/');
}

/** The logical lines of a Dockerfile: comments dropped, backslash continuations joined. */
function instructionsOf(dockerfile: string): string[] {
  const instructions: string[] = [];
  let pending = '';
  for (const rawLine of dockerfile.split(/\r?\n/)) {
    const line = rawLine.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    instructions.push(`${pending}${line}`.trim());
    pending = '';
  }
  if (pending.trim() !== '') instructions.push(pending.trim());
  return instructions;
}

/** The ARG names and the FROM images of a Dockerfile, as checkDockerfile answers them. */
export function dockerfileSummary(dockerfile: string): { args: string[]; images: string[] } {
  const args: string[] = [];
  const images: string[] = [];
  const stages = new Set<string>();
  for (const instruction of instructionsOf(dockerfile)) {
    const [keyword = '', ...words] = instruction.split(/\s+/);
    if (keyword.toUpperCase() === 'ARG') {
      for (const word of words) {
        const name = word.split('=')[0] ?? '';
        if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !args.includes(name)) args.push(name);
      }
    } else if (keyword.toUpperCase() === 'FROM') {
      const operands = words.filter((word) => !word.startsWith('--'));
      const [image, as, stage] = operands;
      if (image !== undefined && image.toLowerCase() !== 'scratch' && !stages.has(image.toLowerCase()) && !images.includes(image)) images.push(image);
      if (as?.toUpperCase() === 'AS' && stage !== undefined) stages.add(stage.toLowerCase());
    }
  }
  return { args, images };
}

export function createEnvironmentChecks(deps: EnvironmentChecksDeps) {
  async function requireOrganization(environmentId: string): Promise<string> {
    const organizationId = await deps.organizationOf(environmentId);
    if (organizationId === undefined) throw notFound(`environment ${environmentId} not found`);
    return organizationId;
  }

  return {
    async checkContainerImage(environmentId: string, body: Static<typeof ContainerImageCheckRequest>): Promise<Static<typeof ContainerImageCheckResponse>> {
      const organizationId = await requireOrganization(environmentId);
      const [listing] = await deps.registries.getContainerVersions(organizationId, body.registry_id, { image_name: body.image_name });
      return { registry_id: body.registry_id, image_name: body.image_name, tag: body.tag, exists: listing?.versions.includes(body.tag) ?? false };
    },

    async checkDockerfile(environmentId: string, body: Static<typeof DockerfileCheckRequest>): Promise<Static<typeof DockerfileCheckResponse>> {
      const organizationId = await requireOrganization(environmentId);
      const dockerfilePath = checkedPath(body.dockerfile_path, '/dockerfile_path');
      const source = await deps.gitFiles.sourceOf(organizationId, body.git_repository, '/git_repository');
      const dockerfile = await deps.gitFiles.withSourceFiles(organizationId, source, '/git_repository', (file) => file(dockerfilePath));
      if (dockerfile === undefined) {
        throw badRequest(`there is no file ${dockerfilePath} under ${source.root_path} of branch ${source.branch}`, [{ field: '/dockerfile_path', message: 'no such file on the branch' }]);
      }
      const { args, images } = dockerfileSummary(dockerfile);
      return { git_repository: gitSourceResponse(source), dockerfile_path: dockerfilePath, arg: args, repositories: images };
    },

    async checkGitFile(environmentId: string, body: Static<typeof GitFileCheckRequest>): Promise<Static<typeof GitFileCheckResponse>> {
      const organizationId = await requireOrganization(environmentId);
      const paths = body.files.map((file, index) => checkedPath(file, `/files/${index}`));
      const source = await deps.gitFiles.sourceOf(organizationId, body.git_repository, '/git_repository');
      const files = await deps.gitFiles.withSourceFiles(organizationId, source, '/git_repository', async (file) => {
        const found: Array<{ path: string; exists: boolean }> = [];
        for (const path of paths) found.push({ path, exists: (await file(path)) !== undefined });
        return found;
      });
      return { git_repository: gitSourceResponse(source), files };
    },

    async checkHelmRepository(environmentId: string, body: Static<typeof HelmCheckRequest>): Promise<Static<typeof HelmCheckResponse>> {
      const organizationId = await requireOrganization(environmentId);
      const source = await deps.gitFiles.sourceOf(organizationId, body.git_repository, '/git_repository');
      const chart = await deps.gitFiles.withSourceFiles(organizationId, source, '/git_repository', (file) => chartAt(file, source.root_path, '/git_repository'));
      return { git_repository: gitSourceResponse(source), ...chart };
    },
  };
}

export type EnvironmentChecks = ReturnType<typeof createEnvironmentChecks>;
