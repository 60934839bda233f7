import { Type, type TObject } from 'typebox';
import { ListOf, Uuid } from '../../protocol/wire.ts';
import { SERVICE_KINDS } from '../variables/variables.builtins.ts';
import type { ServiceKindDefinition } from './services.kinds.ts';

/** Wire pieces of the generic service routes; the bodies and answers themselves are each kind's (services.kinds.ts). */

export const ServiceEnvironmentParams = Type.Object({ environmentId: Uuid }, { additionalProperties: false });

/** `{ applicationId }`, `{ databaseId }`, …: the path parameter of one kind's item routes. */
export function serviceParams(definition: Pick<ServiceKindDefinition, 'idParam'>): TObject {
  return Type.Object({ [definition.idParam]: Uuid }, { additionalProperties: false });
}


/**
 * The reference's Link: where a service is reached from outside (listApplicationLinks, listContainerLinks). Its public
 * hostname is the default link (`is_platform_domain`), then each verified custom domain.
 */
export const Link = Type.Object(
  {
    service_id: Uuid,
    service_type: Type.Enum(SERVICE_KINDS),
    url: Type.String({ description: 'http://<host>:<apps port>: what the installation\'s apps proxy (SLIPWAY_APPS_PORT) answers on.' }),
    internal_port: Type.Integer({ description: 'The service\'s public port the host reaches (its default one).' }),
    external_port: Type.Integer({ description: 'The port of the URL: the apps proxy\'s.' }),
    is_platform_domain: Type.Boolean({ description: 'True for the service\'s own hostname under SLIPWAY_APPS_DOMAIN, false for a custom domain.' }),
    is_default: Type.Boolean(),
  },
  { $id: 'Link', additionalProperties: false },
);

export const LinkResponseList = ListOf(Link, 'LinkResponseList');
