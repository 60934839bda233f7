/**
 * Deployment rules (migrations/0039_deployment_rules.ts, docs/deployment-rules.md). Times of day are stored as the
 * wall-clock `HH:MM` of the rule's IANA time zone; weekdays as the reference's WeekdayEnum names joined by commas, in
 * week order.
 */

/** A project's rule: new environments whose name matches `wildcard` get its cluster, mode and schedule. */
export interface ProjectDeploymentRulesTable {
  id: string;
  project_id: string;
  name: string;
  name_key: string;
  description: string | null;
  /** PRODUCTION, STAGING, DEVELOPMENT or PREVIEW. */
  mode: string;
  cluster_id: string;
  auto_stop: number;
  timezone: string;
  start_time: string;
  stop_time: string;
  weekdays: string;
  /** `*` matches any run of characters; the empty wildcard matches every name. */
  wildcard: string;
  /** 0 is tried first. */
  priority_index: number;
  created_at: string;
  updated_at: string;
}

/** An environment's one rule: its auto-stop schedule, applied by the deployment-rules schedule. */
export interface EnvironmentDeploymentRulesTable {
  id: string;
  environment_id: string;
  auto_stop: number;
  on_demand_preview: number;
  auto_preview: number;
  timezone: string;
  start_time: string;
  stop_time: string;
  weekdays: string;
  /**
   * The instant up to which the schedule's starts and stops have been acted on: an event at or before it is never
   * acted on again. Moved forward by compare-and-set, so two sweeps cannot both act on one event.
   */
  schedule_applied_until: string;
  created_at: string;
  updated_at: string;
}
