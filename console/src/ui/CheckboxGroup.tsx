/**
 * A choice of several values of an enumeration (webhook events, environment types, annotation scopes): native
 * checkboxes in a fieldset whose legend names the choice; the server's message for the field under it, tied to the
 * group by `aria-describedby`.
 */
export function CheckboxGroup<Value extends string>(props: {
  id: string;
  legend: string;
  options: readonly { value: Value; label: string }[];
  selected: readonly Value[];
  onChange: (selected: Value[]) => void;
  description?: string;
  errorMessage?: string | undefined;
}) {
  const describedBy = [props.description === undefined ? '' : `${props.id}-description`, props.errorMessage === undefined ? '' : `${props.id}-error`].filter((id) => id !== '').join(' ');
  function toggle(value: Value, checked: boolean) {
    // Kept in the options' order, so the request lists the values as the form shows them.
    props.onChange(props.options.map((option) => option.value).filter((candidate) => (candidate === value ? checked : props.selected.includes(candidate))));
  }
  return (
    <fieldset className="fieldset checkbox-group" aria-describedby={describedBy === '' ? undefined : describedBy}>
      <legend>{props.legend}</legend>
      {props.description === undefined ? null : (
        <p id={`${props.id}-description`} className="field-description">
          {props.description}
        </p>
      )}
      <div className="checkbox-grid">
        {props.options.map((option) => (
          <div key={option.value} className="checkbox-field">
            <input id={`${props.id}-${option.value}`} type="checkbox" checked={props.selected.includes(option.value)} onChange={(event) => toggle(option.value, event.target.checked)} />
            <label htmlFor={`${props.id}-${option.value}`}>{option.label}</label>
          </div>
        ))}
      </div>
      {props.errorMessage === undefined ? null : (
        <p id={`${props.id}-error`} className="field-error">
          {props.errorMessage}
        </p>
      )}
    </fieldset>
  );
}
