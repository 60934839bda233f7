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
  { $id: 'InviteMemberRequest', additionalProperties: false, examples: [{ email: 'grace@acme.example', role: 'DEVELOPER' }] },
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
  {
    $id: 'InviteMember',
    examples: [
      {
        id: 'e4a7b2c9-1d3f-4e68-9b0a-5c2d8f7e1a34',
        created_at: '2026-03-02T10:12:40.006Z',
        email: 'grace@acme.example',
        role: 'DEVELOPER',
        invitation_link: 'https://slipway.acme.example/organization/3f6c2a8e-5b1d-4c7a-9e2f-1a4b6c8d0e12/inviteMember/e4a7b2c9-1d3f-4e68-9b0a-5c2d8f7e1a34',
        invitation_status: 'PENDING',
        organization_name: 'Acme',
        inviter: 'Ada Lovelace',
        role_id: '5d2b9e10-7a4c-4c3e-8f61-0b9a2e4d7c55',
        role_name: 'DEVELOPER',
        expires_at: '2026-03-09T10:12:40.006Z',
      },
    ],
  },
);
export const InviteMemberResponseList = ListOf(InviteMember, 'InviteMemberResponseList');

export const InvitationParams = Type.Object({ organizationId: Uuid, inviteId: Uuid }, { additionalProperties: false });
