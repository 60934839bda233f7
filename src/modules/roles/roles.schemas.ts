import { Type } from 'typebox';
import { ListOf, Uuid } from '../../http/schema.ts';

export const OrganizationAvailableRole = Type.Object(
  { id: Uuid, name: Type.String() },
  { $id: 'OrganizationAvailableRole' },
);
export const OrganizationAvailableRoleList = ListOf(OrganizationAvailableRole, 'OrganizationAvailableRoleList');
