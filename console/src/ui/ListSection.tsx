import type { ReactNode } from 'react';
import { messageOf } from '../api/client.ts';
import { Button, ErrorMessage, Spinner } from './controls.tsx';

/** What a list section reads of its query (a TanStack Query result). */
export interface ListQueryState {
  isPending: boolean;
  isError: boolean;
  isSuccess: boolean;
  error: unknown;
}

/**
 * One list of a settings page: its heading (naming the section and its table), an introduction, the loading, error
 * and empty states, and a table whose last column holds each row's actions. The main action ("New API token") sits in
 * the empty state while there is nothing, and beside the heading once there are rows, so it is always one Tab away
 * from the heading and never offered twice.
 */
export function ListSection(props: {
  /** The heading's id: it names the section and the table. */
  id: string;
  title: string;
  intro?: ReactNode;
  query: ListQueryState;
  count: number;
  loadingLabel: string;
  /** `always`: the action stays beside the heading even when the list is empty (a list that is rarely empty). */
  create?: { label: string; onPress: () => void; always?: boolean };
  /** Without it, an empty list shows nothing (a list that cannot be empty, such as the members). */
  empty?: { title: string; text: ReactNode };
  /** A live message between the error and the list ("A new invitation was sent…"). */
  status?: ReactNode;
  /** The column headers; an unlabelled "Actions" column is added at the end. */
  columns: readonly string[];
  /** The rows (`<tr>` elements). */
  children: ReactNode;
}) {
  const { create, empty } = props;
  return (
    <section aria-labelledby={props.id} className="section">
      <div className="section-heading">
        <h2 id={props.id}>{props.title}</h2>
        {create !== undefined && (create.always === true || props.count > 0) ? <Button onPress={create.onPress}>{create.label}</Button> : null}
      </div>
      {props.intro === undefined ? null : <p className="muted section-intro">{props.intro}</p>}
      {props.query.isPending ? <Spinner label={props.loadingLabel} /> : null}
      <ErrorMessage message={props.query.isError ? messageOf(props.query.error) : undefined} />
      {props.status}
      {empty !== undefined && props.query.isSuccess && props.count === 0 ? (
        <div className="empty card">
          <h3>{empty.title}</h3>
          <p className="muted">{empty.text}</p>
          {create === undefined || create.always === true ? null : <Button onPress={create.onPress}>{create.label}</Button>}
        </div>
      ) : null}
      {props.count === 0 ? null : (
        <ListTable labelledBy={props.id} columns={props.columns}>
          {props.children}
        </ListTable>
      )}
    </section>
  );
}

/** A list's table: named by a heading (`labelledBy`) or a label, its column headers, and an unlabelled Actions column last. */
export function ListTable({ labelledBy, label, columns, children }: { labelledBy?: string; label?: string; columns: readonly string[]; children: ReactNode }) {
  return (
    <table className="table" aria-labelledby={labelledBy} aria-label={label}>
      <thead>
        <tr>
          {columns.map((column) => (
            <th key={column} scope="col">
              {column}
            </th>
          ))}
          <th scope="col">
            <span className="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}
