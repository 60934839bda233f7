import type { components } from '../../../src/cli/api-types.generated.ts';

/**
 * The service kinds the console manages, with the API's path noun of each (`/application/{id}/deploy`,
 * `/agenticWorkflow/{id}`, …), the key of their statuses in `/environment/{id}/statuses`, and which settings sections
 * their API serves (the settings tab is one component that reads these).
 */
export type ServiceKindName = 'application' | 'container' | 'database' | 'job' | 'helm' | 'terraform' | 'agenticWorkflow';

export interface ServiceKind {
  name: ServiceKindName;
  /** The API's service_type. */
  type: 'APPLICATION' | 'CONTAINER' | 'DATABASE' | 'JOB' | 'HELM' | 'TERRAFORM' | 'AGENTIC_WORKFLOW';
  label: string;
  /** The key in the environment's statuses answer. */
  statusKey: 'applications' | 'containers' | 'databases' | 'jobs' | 'helms' | 'terraforms' | 'agentic_workflows';
  /** Whether it has variables of its own (databases have none: their built-ins are the environment's). */
  hasVariables: boolean;
  /** Whether it answers links (a URL). */
  hasLinks: boolean;
  description: string;
  /** What its settings tab offers, by what the kind's edit operation and sub-resources take. */
  settings: {
    /** `instances`: cpu, memory and the instance counts; `cpuMemory`: cpu and memory only. */
    resources: 'instances' | 'cpuMemory' | 'none';
    /** Ports of its own workload (applications, containers), edited as a whole list. */
    ports: boolean;
    /** Readiness and liveness probes (`healthchecks`, which the edit requires of these kinds). */
    healthChecks: boolean;
    /** `/<kind>/{id}/deploymentRestriction`: the paths whose changes trigger an automatic deployment. */
    deploymentRestrictions: boolean;
    /** `/<kind>/{id}/advancedSettings` and `/default<Kind>AdvancedSettings`: the key of the latter's path. */
    advancedSettings: 'Application' | 'Container' | 'Job' | 'Helm' | 'Terraform' | undefined;
  };
}

export const KINDS: readonly ServiceKind[] = [
  {
    name: 'application',
    type: 'APPLICATION',
    label: 'Application',
    statusKey: 'applications',
    hasVariables: true,
    hasLinks: true,
    description: 'Built from a git repository, run with its ports and health check.',
    settings: { resources: 'instances', ports: true, healthChecks: true, deploymentRestrictions: true, advancedSettings: 'Application' },
  },
  {
    name: 'container',
    type: 'CONTAINER',
    label: 'Container',
    statusKey: 'containers',
    hasVariables: true,
    hasLinks: true,
    description: 'An image from a container registry, run as it is.',
    settings: { resources: 'instances', ports: true, healthChecks: true, deploymentRestrictions: false, advancedSettings: 'Container' },
  },
  {
    name: 'database',
    type: 'DATABASE',
    label: 'Database',
    statusKey: 'databases',
    hasVariables: false,
    hasLinks: false,
    description: 'PostgreSQL, MySQL, MongoDB or Redis, with its credentials as variables.',
    settings: { resources: 'cpuMemory', ports: false, healthChecks: false, deploymentRestrictions: false, advancedSettings: undefined },
  },
  {
    name: 'job',
    type: 'JOB',
    label: 'Job',
    statusKey: 'jobs',
    hasVariables: true,
    hasLinks: false,
    description: 'A command on a schedule (cron) or at the environment’s start, stop and deletion (lifecycle).',
    settings: { resources: 'cpuMemory', ports: false, healthChecks: true, deploymentRestrictions: true, advancedSettings: 'Job' },
  },
  {
    name: 'helm',
    type: 'HELM',
    label: 'Helm chart',
    statusKey: 'helms',
    hasVariables: true,
    hasLinks: true,
    description: 'A chart of one of the organization’s Helm repositories, with its values overridden.',
    settings: { resources: 'none', ports: false, healthChecks: false, deploymentRestrictions: true, advancedSettings: 'Helm' },
  },
  {
    name: 'terraform',
    type: 'TERRAFORM',
    label: 'Terraform',
    statusKey: 'terraforms',
    hasVariables: true,
    hasLinks: false,
    description: 'The Terraform or OpenTofu files of a git repository, planned and applied with their variables.',
    settings: { resources: 'none', ports: false, healthChecks: false, deploymentRestrictions: true, advancedSettings: 'Terraform' },
  },
  {
    name: 'agenticWorkflow',
    type: 'AGENTIC_WORKFLOW',
    label: 'Agentic workflow',
    statusKey: 'agentic_workflows',
    hasVariables: true,
    hasLinks: false,
    description: 'An LLM agent with its instructions, model and tools, run on a schedule or when deployed.',
    settings: { resources: 'cpuMemory', ports: false, healthChecks: false, deploymentRestrictions: false, advancedSettings: undefined },
  },
];

export function kindNamed(name: string): ServiceKind | undefined {
  return KINDS.find((kind) => kind.name === name);
}

export type Application = components['schemas']['Application'];
export type ContainerService = components['schemas']['ContainerResponse'];
export type DatabaseService = components['schemas']['Database'];
export type JobService = components['schemas']['JobResponse'];
export type HelmService = components['schemas']['HelmResponse'];
export type TerraformService = components['schemas']['TerraformResponse'];
export type AgenticWorkflowService = components['schemas']['AgenticWorkflowResponse'];
export type AnyService = Application | ContainerService | DatabaseService | JobService | HelmService | TerraformService | AgenticWorkflowService;
