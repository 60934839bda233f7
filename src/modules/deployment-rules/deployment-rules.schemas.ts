import { Type, type Static } from 'typebox';
import { ENVIRONMENT_MODES } from '../environments/environments.schemas.ts';
import { BaseFields, Description, ListOf, Name, Nullable, Timestamp, Uuid } from '../../protocol/wire.ts';
import { WEEKDAYS } from './deployment-rules.calendar.ts';

/**
 * Wire shapes: the reference's ProjectDeploymentRuleRequest / ProjectDeploymentRule(ResponseList) /
 * ProjectDeploymentRulesPriorityOrderRequest and EnvironmentDeploymentRule(EditRequest). Times are checked by the
 * service (deployment-rules.calendar.ts), which names the field of a bad one.
 */

const WeekdayEnum = Type.Enum(WEEKDAYS);
/** A time of day as `HH:MM` or a date-time (deployment-rules.calendar.ts); its form is the service's to check. */
const TimeOfDay = Type.String({ minLength: 1, maxLength: 64 });
const Timezone = Type.String({ minLength: 1, maxLength: 64 });
const Weekdays = Type.Array(WeekdayEnum, { maxItems: 7 });

export const ProjectDeploymentRuleRequest = Type.Object(
  {
    name: Name,
    description: Type.Optional(Nullable(Description)),
    mode: Type.Enum(ENVIRONMENT_MODES),
    cluster_id: Uuid,
    auto_stop: Type.Optional(Type.Boolean({ default: false })),
    timezone: Timezone,
    start_time: TimeOfDay,
    stop_time: TimeOfDay,
    weekdays: Weekdays,
    /** Environment names the rule applies to: `*` is any run of characters; empty matches every name. */
    wildcard: Type.String({ maxLength: 255, pattern: '^[^\\x00-\\x1f\\x7f]*$', default: '' }),
  },
  {
    $id: 'ProjectDeploymentRuleRequest',
    additionalProperties: false,
    examples: [
      {
        name: 'previews',
        description: 'Pull-request previews stop at night',
        mode: 'PREVIEW',
        cluster_id: '2a9d4c6e-8f1b-4a37-9e52-6b0c3d7f1e85',
        auto_stop: true,
        timezone: 'Europe/Paris',
        start_time: '08:00',
        stop_time: '20:00',
        weekdays: ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY'],
        wildcard: 'pr-*',
      },
    ],
  },
);
export type ProjectDeploymentRuleBody = Static<typeof ProjectDeploymentRuleRequest>;

export const ProjectDeploymentRule = Type.Object(
  {
    ...BaseFields,
    name: Type.String(),
    description: Nullable(Type.String()),
    mode: Type.Enum(ENVIRONMENT_MODES),
    cluster_id: Uuid,
    auto_stop: Type.Boolean(),
    timezone: Type.String(),
    start_time: Timestamp,
    stop_time: Timestamp,
    weekdays: Type.Array(WeekdayEnum),
    wildcard: Type.String(),
    priority_index: Type.Integer(),
  },
  {
    $id: 'ProjectDeploymentRule',
    examples: [
      {
        id: '0e6c9a3f-5b2d-4f71-8a94-1d7e3c5b9f26',
        created_at: '2026-03-02T11:27:12.662Z',
        name: 'previews',
        description: 'Pull-request previews stop at night',
        mode: 'PREVIEW',
        cluster_id: '2a9d4c6e-8f1b-4a37-9e52-6b0c3d7f1e85',
        auto_stop: true,
        timezone: 'Europe/Paris',
        start_time: '1970-01-01T08:00:00Z',
        stop_time: '1970-01-01T20:00:00Z',
        weekdays: ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY'],
        wildcard: 'pr-*',
        priority_index: 0,
        updated_at: '2026-03-02T11:27:12.662Z',
      },
    ],
  },
);
export const ProjectDeploymentRuleResponseList = ListOf(ProjectDeploymentRule, 'ProjectDeploymentRuleResponseList');

export const ProjectDeploymentRulesPriorityOrderRequest = Type.Object(
  { project_deployment_rule_ids_in_order: Type.Optional(Type.Array(Uuid, { maxItems: 1000 })) },
  { $id: 'ProjectDeploymentRulesPriorityOrderRequest', additionalProperties: false },
);
export type PriorityOrderBody = Static<typeof ProjectDeploymentRulesPriorityOrderRequest>;

export const EnvironmentDeploymentRuleEditRequest = Type.Object(
  {
    on_demand_preview: Type.Optional(Type.Boolean({ default: false })),
    auto_preview: Type.Optional(Type.Boolean({ default: false })),
    auto_stop: Type.Optional(Type.Boolean({ default: false })),
    timezone: Timezone,
    start_time: TimeOfDay,
    stop_time: TimeOfDay,
    weekdays: Weekdays,
  },
  {
    $id: 'EnvironmentDeploymentRuleEditRequest',
    additionalProperties: false,
    examples: [
      {
        auto_stop: true,
        timezone: 'Europe/Paris',
        start_time: '07:30',
        stop_time: '21:00',
        weekdays: ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY'],
      },
    ],
  },
);
export type EnvironmentDeploymentRuleBody = Static<typeof EnvironmentDeploymentRuleEditRequest>;

export const EnvironmentDeploymentRule = Type.Object(
  {
    ...BaseFields,
    on_demand_preview: Type.Boolean(),
    auto_stop: Type.Boolean(),
    auto_preview: Type.Boolean(),
    timezone: Type.String(),
    start_time: Timestamp,
    stop_time: Timestamp,
    weekdays: Type.Array(WeekdayEnum),
  },
  {
    $id: 'EnvironmentDeploymentRule',
    examples: [
      {
        id: '72d1b8f5-3e9a-4c06-9f2b-8a5c0e4d7b13',
        created_at: '2026-03-02T11:27:08.066Z',
        on_demand_preview: false,
        auto_stop: true,
        auto_preview: false,
        timezone: 'Europe/Paris',
        start_time: '1970-01-01T07:30:00Z',
        stop_time: '1970-01-01T21:00:00Z',
        weekdays: ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY'],
        updated_at: '2026-03-02T11:27:12.752Z',
      },
    ],
  },
);

export const ProjectParams = Type.Object({ projectId: Uuid }, { additionalProperties: false });
export const ProjectDeploymentRuleParams = Type.Object({ projectId: Uuid, deploymentRuleId: Uuid }, { additionalProperties: false });
export const EnvironmentParams = Type.Object({ environmentId: Uuid }, { additionalProperties: false });
export const EnvironmentDeploymentRuleParams = Type.Object({ environmentId: Uuid, deploymentRuleId: Uuid }, { additionalProperties: false });
