import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { advancedSettingsSchema, defaultAdvancedSettings, type AdvancedSettingsKind } from './services.advanced-settings.ts';
import { kindDefinition } from './services.kinds.ts';
import { serviceParams } from './services.schemas.ts';
import type { ServicesService } from './services.service.ts';

/**
 * The reference's 15 advanced-settings operations (services.advanced-settings.ts): each kind's defaults, and a
 * service's settings read and replaced. The reference answers the edit with 201 and the whole object; so does Slipway.
 */
const ROUTES: ReadonlyArray<{ kind: AdvancedSettingsKind; getId: string; editId: string; defaultId: string; defaultPath: string; tags: string[]; defaultTags: string[] }> = [
  { kind: 'APPLICATION', getId: 'getAdvancedSettings', editId: 'editAdvancedSettings', defaultId: 'getDefaultApplicationAdvancedSettings', defaultPath: 'defaultApplicationAdvancedSettings', tags: ['Application Configuration'], defaultTags: ['Applications'] },
  { kind: 'CONTAINER', getId: 'getContainerAdvancedSettings', editId: 'editContainerAdvancedSettings', defaultId: 'getDefaultContainerAdvancedSettings', defaultPath: 'defaultContainerAdvancedSettings', tags: ['Container Configuration'], defaultTags: ['Containers'] },
  { kind: 'JOB', getId: 'getJobAdvancedSettings', editId: 'editJobAdvancedSettings', defaultId: 'getDefaultJobAdvancedSettings', defaultPath: 'defaultJobAdvancedSettings', tags: ['Job Configuration'], defaultTags: ['Jobs'] },
  { kind: 'HELM', getId: 'getHelmAdvancedSettings', editId: 'editHelmAdvancedSettings', defaultId: 'getDefaultHelmAdvancedSettings', defaultPath: 'defaultHelmAdvancedSettings', tags: ['Helm Configuration'], defaultTags: ['Helms'] },
  { kind: 'TERRAFORM', getId: 'getTerraformAdvancedSettings', editId: 'editTerraformAdvancedSettings', defaultId: 'getDefaultTerraformAdvancedSettings', defaultPath: 'defaultTerraformAdvancedSettings', tags: ['Terraform Configuration'], defaultTags: ['Terraforms'] },
];

export function registerAdvancedSettingsRoutes(app: FastifyTypeBox, services: Pick<ServicesService, 'getAdvancedSettings' | 'editAdvancedSettings'>): void {
  for (const route of ROUTES) {
    const definition = kindDefinition(route.kind);
    const request = advancedSettingsSchema(route.kind, 'request');
    const response = advancedSettingsSchema(route.kind, 'response');
    const idOf = (params: unknown) => (params as Record<string, string>)[definition.idParam] as string;
    const { aService, theService, services: servicesNoun } = definition.prose;

    app.get(
      `/${route.defaultPath}`,
      {
        schema: {
          operationId: route.defaultId,
          summary: `Get the default advanced settings of ${servicesNoun}`,
          description: `Every advanced setting key of ${servicesNoun} with the value ${aService} has until it sets its own.`,
          tags: route.defaultTags,
          response: { 200: response, ...authenticatedErrors() },
        },
        config: { access: { permission: 'catalogs:read', target: 'none' } },
      },
      async () => defaultAdvancedSettings(route.kind),
    );

    app.get(
      `/${definition.item}/:${definition.idParam}/advancedSettings`,
      {
        schema: {
          operationId: route.getId,
          summary: `Get the advanced settings of ${aService}`,
          description: `The advanced settings of ${theService}: every key, with its own value or the default.`,
          tags: route.tags,
          params: serviceParams(definition),
          response: { 200: response, ...authenticatedErrors() },
        },
        config: { access: { permission: 'services:read', target: 'service' } },
      },
      async (req) => services.getAdvancedSettings(route.kind, idOf(req.params)),
    );

    app.put(
      `/${definition.item}/:${definition.idParam}/advancedSettings`,
      {
        schema: {
          operationId: route.editId,
          summary: `Edit the advanced settings of ${aService}`,
          description:
            `Replaces the advanced settings of ${theService}: a key left out goes back to its default. A deployed one becomes OUT_OF_DATE; its ` +
            'next deployment carries them. 400 for a key that does not exist or a value of the wrong type or out of its range.',
          tags: route.tags,
          params: serviceParams(definition),
          body: request,
          response: { 201: response, ...authenticatedErrors() },
        },
        config: { access: { permission: 'services:update', target: 'service' } },
      },
      async (req, reply) => reply.code(HTTP_STATUS.created).send(await services.editAdvancedSettings(route.kind, idOf(req.params), req.body as Record<string, unknown>)),
    );
  }
}
