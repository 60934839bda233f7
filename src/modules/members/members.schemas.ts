import { Type } from 'typebox';
import { BUILT_IN_ROLES } from '../../auth/permissions.ts';
import { BaseFields, ListOf, Uuid } from '../../protocol/wire.ts';

/**
 * The reference's Member: `id` is the user's id; `role` is in InviteMemberRoleEnum (a custom role answers the built-in
 * role its organization-level permission matches: members.service.ts, answeredRole); role_name and role_id name the
 * role itself.
 */
export const Member = Type.Object(
  {
    ...BaseFields,
    name: Type.Optional(Type.String()),
    nickname: Type.Optional(Type.String()),
    email: Type.String(),
    profile_picture_url: Type.Optional(Type.String()),
    last_activity_at: Type.Optional(Type.String({ format: 'date-time' })),
    role: Type.Enum(BUILT_IN_ROLES),
    role_name: Type.String(),
    role_id: Uuid,
  },
  { $id: 'Member' },
);
export const MemberResponseList = ListOf(Member, 'MemberResponseList');

export const MemberRoleUpdateRequest = Type.Object(
  { user_id: Uuid, role_id: Uuid },
  {
    $id: 'MemberRoleUpdateRequest',
    additionalProperties: false,
    examples: [{ user_id: '0b6f3d2e-8c1a-4b97-a5e4-3f9c7d1b2e60', role_id: '5d2b9e10-7a4c-4c3e-8f61-0b9a2e4d7c55' }],
  },
);

export const MemberDeleteRequest = Type.Object({ user_id: Uuid }, { $id: 'MemberDeleteRequest', additionalProperties: false });

export const TransferOwnershipRequest = Type.Object(
  { user_id: Uuid },
  { $id: 'TransferOwnershipRequest', additionalProperties: false },
);

/** "200 with no body" (SPEC.md): nothing is serialized, not even `null`. */
export const EmptyOk = Type.Unsafe<undefined>({ description: 'No body' });
