import type { components } from '../../api/client.ts';
import { CheckboxGroup } from '../../ui/CheckboxGroup.tsx';
import { CheckboxField, TextField } from '../../ui/controls.tsx';

/**
 * The schedule a deployment rule carries (docs/deployment-rules.md, "The environment's schedule"), shared by a
 * project's rules and an environment's own rule: auto-stop, the time zone, the start and stop times of day, the days.
 */
export type Weekday = components['schemas']['ProjectDeploymentRule']['weekdays'][number];

export const WEEKDAYS: readonly { value: Weekday; label: string }[] = [
  { value: 'MONDAY', label: 'Monday' },
  { value: 'TUESDAY', label: 'Tuesday' },
  { value: 'WEDNESDAY', label: 'Wednesday' },
  { value: 'THURSDAY', label: 'Thursday' },
  { value: 'FRIDAY', label: 'Friday' },
  { value: 'SATURDAY', label: 'Saturday' },
  { value: 'SUNDAY', label: 'Sunday' },
];

export interface ScheduleDraft {
  autoStop: boolean;
  timezone: string;
  /** HH:MM, as an `<input type="time">` holds it and the API accepts it. */
  startTime: string;
  stopTime: string;
  weekdays: Weekday[];
}

/** What a new rule starts with: the API's defaults (UTC, 08:00 to 19:00, Monday to Friday, no auto-stop). */
export const DEFAULT_SCHEDULE: ScheduleDraft = { autoStop: false, timezone: 'UTC', startTime: '08:00', stopTime: '19:00', weekdays: ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY'] };

/**
 * The time of day of the API's answer: it writes a time as `1970-01-01THH:MM:00Z`, the date and the Z meaning nothing
 * (the zone is the rule's `timezone`), so the wall-clock time is read as written, never converted.
 */
export function timeOfDay(value: string): string {
  return /T(\d{2}:\d{2})/.exec(value)?.[1] ?? value.slice(0, 5);
}

export function scheduleOf(rule: { auto_stop: boolean; timezone: string; start_time: string; stop_time: string; weekdays: readonly Weekday[] }): ScheduleDraft {
  return { autoStop: rule.auto_stop, timezone: rule.timezone, startTime: timeOfDay(rule.start_time), stopTime: timeOfDay(rule.stop_time), weekdays: [...rule.weekdays] };
}

/** The schedule's fields of a create or edit body. */
export function scheduleBody(draft: ScheduleDraft) {
  return { auto_stop: draft.autoStop, timezone: draft.timezone.trim(), start_time: draft.startTime, stop_time: draft.stopTime, weekdays: draft.weekdays };
}

/** "Runs 08:00–19:00, Monday to Friday (Europe/Paris)", or "Always on" without auto-stop. */
export function scheduleSummary(draft: ScheduleDraft): string {
  if (!draft.autoStop) return 'Always on';
  return `Runs ${draft.startTime}–${draft.stopTime}, ${daysOf(draft.weekdays)} (${draft.timezone})`;
}

function daysOf(weekdays: readonly Weekday[]): string {
  const indexes = WEEKDAYS.map((day, index) => (weekdays.includes(day.value) ? index : -1)).filter((index) => index >= 0);
  if (indexes.length === 7) return 'every day';
  const first = indexes[0];
  const last = indexes[indexes.length - 1];
  // A run of consecutive days reads as a range; anything else as the days' short names.
  if (first !== undefined && last !== undefined && indexes.length > 2 && last - first === indexes.length - 1) return `${WEEKDAYS[first]?.label} to ${WEEKDAYS[last]?.label}`;
  return indexes.map((index) => WEEKDAYS[index]?.label.slice(0, 3)).join(', ') || 'no day';
}

/** A native time input (HH:MM) with its visible label, the server's message under it. */
function TimeField({ id, label, value, onChange, description, errorMessage }: { id: string; label: string; value: string; onChange: (value: string) => void; description?: string; errorMessage: string | undefined }) {
  const describedBy = [description === undefined ? '' : `${id}-description`, errorMessage === undefined ? '' : `${id}-error`].filter((part) => part !== '').join(' ');
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} type="time" required value={value} onChange={(event) => onChange(event.target.value)} aria-invalid={errorMessage === undefined ? undefined : true} aria-describedby={describedBy === '' ? undefined : describedBy} />
      {description === undefined ? null : (
        <span id={`${id}-description`} className="field-description">
          {description}
        </span>
      )}
      {errorMessage === undefined ? null : (
        <span id={`${id}-error`} className="field-error">
          {errorMessage}
        </span>
      )}
    </div>
  );
}

/**
 * The schedule's fields. `fields` are the 400's details by field (`timezone`, `stop_time`, `weekdays/0`): each shows
 * at its field. The days' message may name the list or one of its entries.
 */
export function ScheduleFields({ id, draft, onChange, fields }: { id: string; draft: ScheduleDraft; onChange: (draft: ScheduleDraft) => void; fields: Map<string, string> }) {
  const set = <Key extends keyof ScheduleDraft>(key: Key) => (value: ScheduleDraft[Key]) => onChange({ ...draft, [key]: value });
  return (
    <>
      <CheckboxField
        id={`${id}-auto-stop`}
        label="Stop and start on a schedule"
        checked={draft.autoStop}
        onChange={set('autoStop')}
        description="Slipway stops the environment at the stop time and deploys it again at the start time, on each chosen day."
      />
      <TextField label="Time zone" value={draft.timezone} onChange={set('timezone')} isRequired maxLength={64} description="An IANA name such as Europe/Paris or UTC: the times below are its wall-clock times." errorMessage={fields.get('timezone')} />
      <div className="field-grid">
        <TimeField id={`${id}-start`} label="Start time" value={draft.startTime} onChange={set('startTime')} errorMessage={fields.get('start_time')} />
        <TimeField id={`${id}-stop`} label="Stop time" value={draft.stopTime} onChange={set('stopTime')} errorMessage={fields.get('stop_time')} />
      </div>
      <CheckboxGroup
        id={`${id}-weekdays`}
        legend="Days"
        options={WEEKDAYS}
        selected={draft.weekdays}
        onChange={set('weekdays')}
        errorMessage={[...fields.entries()].find(([field]) => field === 'weekdays' || field.startsWith('weekdays/'))?.[1]}
      />
    </>
  );
}
