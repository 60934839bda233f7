import { Type, type TObject } from 'typebox';
import { Uuid } from '../../http/schema.ts';
import type { ServiceKindDefinition } from './services.kinds.ts';

/** Wire pieces of the generic service routes; the bodies and answers themselves are each kind's (services.kinds.ts). */

export const ServiceEnvironmentParams = Type.Object({ environmentId: Uuid }, { additionalProperties: false });

/** `{ applicationId }`, `{ databaseId }`, …: the path parameter of one kind's item routes. */
export function serviceParams(definition: Pick<ServiceKindDefinition, 'idParam'>): TObject {
  return Type.Object({ [definition.idParam]: Uuid }, { additionalProperties: false });
}

