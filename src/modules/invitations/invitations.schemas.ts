import { Type } from 'typebox';
import { BUILT_IN_ROLES } from '../../auth/permissions.ts';
import { BaseFields, ListOf, Timestamp, Uuid } from '../../protocol/wire.ts';

export const InviteMemberRoleEnum = Type.Enum(BUILT_IN_ROLES, { $id: 'InviteMemberRoleEnum' });
/** The reference's PENDING and EXPIRED, plus ACCEPTED for an invitation that has been used. */
export const InviteStatusEnum = Type.Enum(['PENDING', 'EXPIRED', 'ACCEPTED'], { $id: 'InviteStatusEnum' });

/** The role by `role_id`, or by its name in `role`; when both are given they must name the same role. */
export const InviteMemberRequest = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 254 }),
    role: Type.Optional(InviteMemberRoleEnum),
    role_id: Type.Optional(Uuid),
  },
  { $id: 'InviteMemberRequest', additionalProperties: false },
);

export const InviteMember = Type.Object(
  {
    ...BaseFields,
    email: Type.String(),
    /** A custom role answers the built-in role its organization-level permission matches (members.service.ts). */
    role: InviteMemberRoleEnum,
    invitation_link: Type.String({ format: 'uri' }),
    invitation_status: InviteStatusEnum,
    organization_name: Type.String(),
    inviter: Type.String(),
    logo_url: Type.Optional(Type.String()),
    role_id: Uuid,
    role_name: Type.String(),
    /** An addition to the reference: when a pending invitation becomes EXPIRED. */
    expires_at: Timestamp,
  },
  { $id: 'InviteMember' },
);
export const InviteMemberResponseList = ListOf(InviteMember, 'InviteMemberResponseList');

export const InvitationParams = Type.Object({ organizationId: Uuid, inviteId: Uuid }, { additionalProperties: false });
