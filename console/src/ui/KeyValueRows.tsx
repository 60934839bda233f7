import { Button } from './controls.tsx';

export interface KeyValueRow {
  key: string;
  value: string;
  /** A label's "propagate to the cloud provider" flag (absent for annotations). */
  propagate?: boolean;
}

/**
 * Rows of key and value (a labels or annotations group): each row's inputs are named after its position ("Key 2",
 * "Value 2") so a screen reader tells the rows apart, the server's message for `<field>/<index>/key` sits under its
 * input, and rows are added and removed by buttons named after the row. With `propagateLabel`, each row has that
 * checkbox too.
 */
export function KeyValueRows(props: {
  id: string;
  legend: string;
  rows: readonly KeyValueRow[];
  onChange: (rows: KeyValueRow[]) => void;
  /** The 400 details by field path; `field` is the array's name in the request (`labels`). */
  fields: Map<string, string>;
  field: string;
  propagateLabel?: string;
  valueMaxLength: number;
}) {
  function update(index: number, change: Partial<KeyValueRow>) {
    props.onChange(props.rows.map((row, position) => (position === index ? { ...row, ...change } : row)));
  }
  return (
    <fieldset className="fieldset key-value-rows">
      <legend>{props.legend}</legend>
      {props.rows.map((row, index) => {
        const keyError = props.fields.get(`${props.field}/${index}/key`);
        const valueError = props.fields.get(`${props.field}/${index}/value`);
        const rowId = `${props.id}-${index}`;
        return (
          <div key={index} className="key-value-row">
            <div className="field">
              <label htmlFor={`${rowId}-key`}>Key {index + 1}</label>
              <input id={`${rowId}-key`} value={row.key} onChange={(event) => update(index, { key: event.target.value })} maxLength={317} spellCheck={false} autoComplete="off" aria-invalid={keyError === undefined ? undefined : true} aria-describedby={keyError === undefined ? undefined : `${rowId}-key-error`} />
              {keyError === undefined ? null : (
                <span id={`${rowId}-key-error`} className="field-error">
                  {keyError}
                </span>
              )}
            </div>
            <div className="field">
              <label htmlFor={`${rowId}-value`}>Value {index + 1}</label>
              <input id={`${rowId}-value`} value={row.value} onChange={(event) => update(index, { value: event.target.value })} maxLength={props.valueMaxLength} spellCheck={false} autoComplete="off" aria-invalid={valueError === undefined ? undefined : true} aria-describedby={valueError === undefined ? undefined : `${rowId}-value-error`} />
              {valueError === undefined ? null : (
                <span id={`${rowId}-value-error`} className="field-error">
                  {valueError}
                </span>
              )}
            </div>
            {props.propagateLabel === undefined ? null : (
              <div className="checkbox-field">
                <input id={`${rowId}-propagate`} type="checkbox" checked={row.propagate === true} onChange={(event) => update(index, { propagate: event.target.checked })} />
                <label htmlFor={`${rowId}-propagate`}>
                  {props.propagateLabel}
                  <span className="visually-hidden"> (row {index + 1})</span>
                </label>
              </div>
            )}
            <Button variant="quiet-danger" className="key-value-remove" aria-label={`Remove row ${index + 1}`} onPress={() => props.onChange(props.rows.filter((_, position) => position !== index))}>
              Remove
            </Button>
          </div>
        );
      })}
      <Button variant="secondary" onPress={() => props.onChange([...props.rows, { key: '', value: '', ...(props.propagateLabel === undefined ? {} : { propagate: false }) }])}>
        Add a row
      </Button>
    </fieldset>
  );
}
