/**
 * The reference's vocabularies for organization events, and how a request is placed in them. Every write route is
 * classified from what it already declares — its operation id, method and path — so a new module's routes are
 * audited without a hand-kept list:
 *
 *   event type       the operation id's verb (createX → CREATE, deployX → TRIGGER_DEPLOY, …), else the method
 *   target type      the last path segment naming a kind of resource (`/environment/:environmentId/application`
 *                    creates an APPLICATION; `/organization/:organizationId/apiToken` acts on the ORGANIZATION)
 *   sub-target type  the last path segment naming a part of a resource (variables, secrets, API tokens, …)
 */

import { REQUEST_ORIGINS, type RequestOrigin } from '../../lib/request-origin.ts';

/** Audit entries and deployment records tell a request's origin alike; this module's readers find it here too. */
export { originOf } from '../../lib/request-origin.ts';

export const ORGANIZATION_EVENT_TYPES = [
  'CREATE',
  'UPDATE',
  'DELETE',
  'ACCEPT',
  'EXPORT',
  'CLONE',
  'DEPLOY_QUEUED',
  'STOP_QUEUED',
  'RESTART_QUEUED',
  'DELETE_QUEUED',
  'UNINSTALL_QUEUED',
  'MAINTENANCE',
  'DRY_RUN',
  'TRIGGER_REDEPLOY',
  'TRIGGER_CANCEL',
  'FORCE_RUN_QUEUED',
  'FORCE_RUN_QUEUED_DEPLOY',
  'FORCE_RUN_QUEUED_STOP',
  'FORCE_RUN_QUEUED_DELETE',
  'TRIGGER_DEPLOY',
  'TRIGGER_STOP',
  'TRIGGER_RESTART',
  'TRIGGER_DELETE',
  'TRIGGER_UNINSTALL',
  'TRIGGER_DEPLOY_DRY_RUN',
  'TRIGGER_FORCE_UNLOCK_STATE',
  'TRIGGER_FORCE_RUN',
  'TRIGGER_FORCE_RUN_DEPLOY',
  'TRIGGER_FORCE_RUN_STOP',
  'TRIGGER_FORCE_RUN_DELETE',
  'DEPLOYED',
  'STOPPED',
  'DELETED',
  'UNINSTALLED',
  'RESTARTED',
  'DEPLOYED_DRY_RUN',
  'FORCE_RUN_SUCCEEDED',
  'FORCE_UNLOCK_STATE_SUCCEEDED',
  'DEPLOY_FAILED',
  'STOP_FAILED',
  'DELETE_FAILED',
  'UNINSTALL_FAILED',
  'RESTART_FAILED',
  'DEPLOYED_DRY_RUN_FAILED',
  'FORCE_RUN_FAILED',
  'FORCE_UNLOCK_STATE_FAILED',
  'SHELL',
  'PORT_FORWARD',
  'REMOTE_DEBUG',
  'IMPORT',
  'LOCK',
  'UNLOCK',
] as const;
export type OrganizationEventType = (typeof ORGANIZATION_EVENT_TYPES)[number];

export const ORGANIZATION_EVENT_TARGET_TYPES = [
  'APPLICATION',
  'CLUSTER',
  'CONTAINER',
  'CONTAINER_REGISTRY',
  'DATABASE',
  'ENTERPRISE_CONNECTION',
  'ENVIRONMENT',
  'JOB',
  'HELM',
  'MEMBERS_AND_ROLES',
  'ORGANIZATION',
  'PROJECT',
  'WEBHOOK',
  'TERRAFORM',
] as const;
export type OrganizationEventTargetType = (typeof ORGANIZATION_EVENT_TARGET_TYPES)[number];

export const ORGANIZATION_EVENT_SUB_TARGET_TYPES = [
  'ADVANCED_SETTINGS',
  'ALERT_RULE',
  'ANNOTATIONS_GROUP',
  'API_TOKEN',
  'BILLING_INFO',
  'BILLING_USAGE_REPORT',
  'CLOUD_PROVIDER_CREDENTIALS',
  'CLUSTER_CREDENTIALS',
  'CLUSTER_ROUTING_TABLE',
  'CONFIG',
  'CREDIT_CARD',
  'CREDIT_CODE',
  'CUSTOM_DOMAIN',
  'CUSTOM_ROLE',
  'DEPLOYMENT_RULE',
  'DEPLOYMENT_STAGE',
  'GITHUB_APP',
  'GIT_REPOSITORY',
  'GIT_TOKEN',
  'INVITATION',
  'KUBERNETES_CONFIGURATION',
  'KUBERNETES_CREDENTIALS',
  'LABELS_GROUP',
  'MEMBER_ROLE',
  'PLAN',
  'REMOTE_ACCESS',
  'SECRET',
  'SSO',
  'TERRAFORM',
  'TRANSFER_OWNERSHIP',
  'VARIABLE',
] as const;
export type OrganizationEventSubTargetType = (typeof ORGANIZATION_EVENT_SUB_TARGET_TYPES)[number];

/** The reference's OrganizationEventOrigin: where the request came from (told from its User-Agent: lib/request-origin.ts). */
export const ORGANIZATION_EVENT_ORIGINS = REQUEST_ORIGINS;
export type OrganizationEventOrigin = RequestOrigin;

export const AUTHOR_TYPES = ['USER', 'API_TOKEN', 'POLICY_TOKEN'] as const;
export type AuthorType = (typeof AUTHOR_TYPES)[number];

export const OUTCOMES = ['SUCCESS', 'FAILURE'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** Operation-id verbs, longest first where one starts another (`redeploy` before `deploy` is not needed: prefixes). */
const VERBS: ReadonlyArray<[RegExp, OrganizationEventType]> = [
  [/^(create|add|post(?!Accept)|invite|enroll|generate|upload)/, 'CREATE'],
  [/^(postAccept|accept)/, 'ACCEPT'],
  [/^(edit|update|change|put|patch|set|transfer|rename|attach|detach|enable|disable|upgrade|resolve)/, 'UPDATE'],
  [/^(delete|remove|revoke|withdraw)/, 'DELETE'],
  [/^redeploy/, 'TRIGGER_REDEPLOY'],
  [/^deploy/, 'TRIGGER_DEPLOY'],
  [/^stop/, 'TRIGGER_STOP'],
  [/^(restart|reboot)/, 'TRIGGER_RESTART'],
  [/^cancel/, 'TRIGGER_CANCEL'],
  [/^uninstall/, 'TRIGGER_UNINSTALL'],
  [/^clone/, 'CLONE'],
  [/^(export|download)/, 'EXPORT'],
  [/^import/, 'IMPORT'],
  [/^lock/, 'LOCK'],
  [/^unlock/, 'UNLOCK'],
];

// An audited read (route config `audited`) reveals something, such as a database's credentials: an export.
const METHOD_EVENT_TYPES: Record<string, OrganizationEventType> = { GET: 'EXPORT', POST: 'CREATE', PUT: 'UPDATE', PATCH: 'UPDATE', DELETE: 'DELETE' };

export function eventTypeOf(operationId: string, method: string): OrganizationEventType {
  const verb = VERBS.find(([pattern]) => pattern.test(operationId));
  return verb?.[1] ?? METHOD_EVENT_TYPES[method] ?? 'UPDATE';
}

/** Path segments that name a kind of resource: what a request under them acts on or creates. */
const TARGET_SEGMENTS: Record<string, OrganizationEventTargetType> = {
  organization: 'ORGANIZATION',
  project: 'PROJECT',
  environment: 'ENVIRONMENT',
  cluster: 'CLUSTER',
  selfManagedCluster: 'CLUSTER',
  application: 'APPLICATION',
  container: 'CONTAINER',
  database: 'DATABASE',
  job: 'JOB',
  helm: 'HELM',
  terraform: 'TERRAFORM',
  containerRegistry: 'CONTAINER_REGISTRY',
  webhook: 'WEBHOOK',
  member: 'MEMBERS_AND_ROLES',
  inviteMember: 'MEMBERS_AND_ROLES',
  customRole: 'MEMBERS_AND_ROLES',
  transferOwnership: 'MEMBERS_AND_ROLES',
  enterpriseConnection: 'ENTERPRISE_CONNECTION',
};

/** Path segments that name a part of a resource. */
const SUB_TARGET_SEGMENTS: Record<string, OrganizationEventSubTargetType> = {
  environmentVariable: 'VARIABLE',
  variable: 'VARIABLE',
  secret: 'SECRET',
  apiToken: 'API_TOKEN',
  policyApiToken: 'API_TOKEN',
  gitToken: 'GIT_TOKEN',
  listDirectoriesFromGitRepository: 'GIT_REPOSITORY',
  inviteMember: 'INVITATION',
  member: 'MEMBER_ROLE',
  customRole: 'CUSTOM_ROLE',
  transferOwnership: 'TRANSFER_OWNERSHIP',
  labelsGroup: 'LABELS_GROUP',
  annotationsGroup: 'ANNOTATIONS_GROUP',
  cloudProviderCredentials: 'CLOUD_PROVIDER_CREDENTIALS',
  awsCredentials: 'CLOUD_PROVIDER_CREDENTIALS',
  gcpCredentials: 'CLOUD_PROVIDER_CREDENTIALS',
  azureCredentials: 'CLOUD_PROVIDER_CREDENTIALS',
  scalewayCredentials: 'CLOUD_PROVIDER_CREDENTIALS',
  billingInfo: 'BILLING_INFO',
  billingUsageReport: 'BILLING_USAGE_REPORT',
  creditCard: 'CREDIT_CARD',
  creditCode: 'CREDIT_CODE',
  changePlan: 'PLAN',
  customDomain: 'CUSTOM_DOMAIN',
  deploymentRestriction: 'DEPLOYMENT_RULE',
  deploymentRule: 'DEPLOYMENT_RULE',
  advancedSettings: 'ADVANCED_SETTINGS',
  platformTemplate: 'CONFIG',
  operatorBootstrap: 'KUBERNETES_CREDENTIALS',
  kubeconfig: 'KUBERNETES_CONFIGURATION',
};

export interface RouteClassification {
  eventType: OrganizationEventType;
  targetType: OrganizationEventTargetType;
  subTargetType: OrganizationEventSubTargetType | null;
}

/** Where a write route sits in the vocabularies, from its operation id, method and URL as registered. */
export function classifyRoute(operationId: string, method: string, url: string): RouteClassification {
  let targetType: OrganizationEventTargetType = 'ORGANIZATION';
  let subTargetType: OrganizationEventSubTargetType | null = null;
  for (const segment of url.split('/')) {
    if (segment === '' || segment.startsWith(':')) continue;
    const target = TARGET_SEGMENTS[segment];
    if (target !== undefined) {
      targetType = target;
      subTargetType = null;
    }
    subTargetType = SUB_TARGET_SEGMENTS[segment] ?? subTargetType;
  }
  return { eventType: eventTypeOf(operationId, method), targetType, subTargetType };
}
