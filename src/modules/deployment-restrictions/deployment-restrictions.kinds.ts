/**
 * The kinds of service that have deployment restrictions, as the reference has them: those that can deploy from a
 * git repository (an application always; a job, a Helm chart or a Terraform module when its source is git). Per
 * kind, the reference's tag and operation ids.
 */

export const DEPLOYMENT_RESTRICTION_KINDS = ['APPLICATION', 'JOB', 'HELM', 'TERRAFORM'] as const;
export type DeploymentRestrictionKind = (typeof DEPLOYMENT_RESTRICTION_KINDS)[number];

export interface DeploymentRestrictionRoutesOf {
  kind: DeploymentRestrictionKind;
  tags: string[];
  operations: { list: string; create: string; edit: string; delete: string };
}

const operationsOf = (noun: string) => ({
  list: `get${noun}DeploymentRestrictions`,
  create: `create${noun}DeploymentRestriction`,
  edit: `edit${noun}DeploymentRestriction`,
  delete: `delete${noun}DeploymentRestriction`,
});

export const DEPLOYMENT_RESTRICTION_ROUTES: readonly DeploymentRestrictionRoutesOf[] = [
  { kind: 'APPLICATION', tags: ['Application Deployment Restriction'], operations: operationsOf('Application') },
  { kind: 'JOB', tags: ['Job Deployment Restriction'], operations: operationsOf('Job') },
  { kind: 'HELM', tags: ['Helm Deployment Restriction'], operations: operationsOf('Helm') },
  { kind: 'TERRAFORM', tags: ['Terraform Deployment Restriction'], operations: operationsOf('Terraform') },
];
