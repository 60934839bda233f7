/**
 * Deployment stages (migrations/0038_deployment_stages.ts, docs/deployment-stages.md): the ordered stages of an
 * environment's deploy and the stage each of its services belongs to.
 */

/** One stage of an environment; its services start after those of the stages ordered before it. */
export interface DeploymentStagesTable {
  id: string;
  environment_id: string;
  name: string;
  /** The name's comparison key: unique within the environment. */
  name_key: string;
  description: string | null;
  /** Its place among the environment's stages, 0 first; rewritten as 0, 1, 2, … by every move. */
  deployment_order: number;
  /**
   * DATABASE or SERVICE when this is the stage new services of that group land in (an environment has one of each,
   * which cannot be deleted); null for a stage a user created.
   */
  default_for: string | null;
  created_at: string;
  updated_at: string;
}

/** A service's place in its environment's stages: exactly one row per service. */
export interface DeploymentStageServicesTable {
  id: string;
  service_id: string;
  stage_id: string;
  /** 1 when the environment's deploy leaves the service out (an integer flag: SQLite has no boolean). */
  is_skipped: number;
  created_at: string;
  updated_at: string;
}
