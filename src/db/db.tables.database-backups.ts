/** Database backups and deployment build usage reports (migrations/0050_database_backups.ts, docs/database-backups.md, docs/service-insights.md). */

/** One backup of a database service: asked, made by the worker's backup job, listed, removed with its file. */
export interface DatabaseBackupsTable {
  id: string;
  organization_id: string;
  service_id: string;
  name: string;
  name_key: string;
  message: string;
  /** The engine the file is a dump of: POSTGRESQL (pg_dump custom format), MYSQL (SQL), REDIS (RDB). */
  engine: string;
  /** QUEUED, EXECUTING, READY (the file is complete) or DEPLOYMENT_ERROR (see `failure`). */
  state: string;
  failure: string | null;
  /** The file's name in `<dataDir>/backups/<service_id>/`, once written. */
  file_name: string | null;
  /** bigint: a string from PostgreSQL, a number from SQLite; read with Number(). */
  size_bytes: number | string | null;
  job_id: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

/** The CSV report of one deployment execution's services (generateDeploymentBuildUsageReport), kept until it expires. */
export interface DeploymentBuildUsageReportsTable {
  id: string;
  organization_id: string;
  environment_id: string;
  execution_id: string;
  csv: string;
  expires_at: string;
  created_at: string;
}
