import { Type, type TObject } from 'typebox';
import { BaseFields, ListOf, Nullable, Timestamp, Uuid } from '../../protocol/wire.ts';
import { CERTIFICATE_STATUSES } from '../certificates/certificates.service.ts';
import { CHECKED_DOMAIN_STATUSES, CUSTOM_DOMAIN_STATUSES } from './custom-domains.verification.ts';

/**
 * Wire shapes: the reference's CustomDomainRequest / CustomDomain(ResponseList) / CheckedCustomDomainsResponse.
 * CustomDomainStatusEnum has VALIDATED and VALIDATION_FAILED beside the reference's VALIDATION_PENDING, and a domain
 * answers how to verify it (`verification_record`), what its last check found (`last_check`) and the state of its
 * certificate (`certificate_status`, `certificate_error`, `certificate_expires_at`), Slipway's additions.
 */

export const CustomDomainRequest = Type.Object(
  {
    /** A host name (IDNs accepted, stored in punycode) or `*.example.com`. */
    domain: Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\x00-\\x20\\x7f/\\\\@:?#]+$' }),
    generate_certificate: Type.Boolean(),
    use_cdn: Type.Optional(Type.Boolean({ default: false })),
  },
  { $id: 'CustomDomainRequest', additionalProperties: false },
);

const CheckedStatusEnum = Type.Enum(CHECKED_DOMAIN_STATUSES);

export const CustomDomain = Type.Object(
  {
    ...BaseFields,
    domain: Type.String(),
    generate_certificate: Type.Boolean(),
    use_cdn: Type.Boolean(),
    /** The host name the domain's CNAME must point at: the service's own public host name. */
    validation_domain: Type.String(),
    status: Type.Enum(CUSTOM_DOMAIN_STATUSES),
    verification_record: Type.Object({ type: Type.Literal('TXT'), name: Type.String(), value: Type.String() }),
    last_check: Nullable(Type.Object({ status: CheckedStatusEnum, details: Nullable(Type.String()), checked_at: Timestamp })),
    /**
     * Automatic HTTPS (docs/https.md): null when `generate_certificate` is off (or the installation serves no HTTPS);
     * PENDING until the first order ends, ISSUED, or ERROR with `certificate_error` saying why (an issued
     * certificate keeps serving until `certificate_expires_at` meanwhile).
     */
    certificate_status: Nullable(Type.Enum(CERTIFICATE_STATUSES)),
    certificate_error: Nullable(Type.String()),
    certificate_expires_at: Nullable(Timestamp),
  },
  { $id: 'CustomDomain' },
);
export const CustomDomainResponseList = ListOf(CustomDomain, 'CustomDomainResponseList');

export const CheckedCustomDomainsResponse = Type.Object(
  {
    results: Type.Array(Type.Object({ domain_name: Type.String(), status: CheckedStatusEnum, error_details: Nullable(Type.String()) })),
  },
  { $id: 'CheckedCustomDomainsResponse' },
);

/** The path parameters of a domain under its service (`applicationId`, `containerId`, `helmId`). */
export function customDomainParams(idParam: string): TObject {
  return Type.Object({ [idParam]: Uuid, customDomainId: Uuid }, { additionalProperties: false });
}
