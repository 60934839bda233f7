import { useEffect, useState, type ReactNode } from 'react';
import { summaryWithFieldsOf } from '../../api/client.ts';
import { Button, ErrorMessage } from '../../ui/controls.tsx';

/** One titled card of a cluster tab; `id` names its heading for the section's label. */
export function ClusterCard({ id, title, intro, children }: { id: string; title: string; intro?: ReactNode; children: ReactNode }) {
  return (
    <section aria-labelledby={`${id}-heading`} className="card section">
      <h2 id={`${id}-heading`} className="card-title">
        {title}
      </h2>
      {intro === undefined ? null : <p className="muted">{intro}</p>}
      {children}
    </section>
  );
}

/** True for a few seconds after `done` turns true: long enough for "Saved." to be read and announced. */
export function useBriefly(done: boolean): boolean {
  const [shown, setShown] = useState(false);
  useEffect(() => {
    if (!done) return;
    setShown(true);
    const timer = setTimeout(() => setShown(false), 4000);
    return () => clearTimeout(timer);
  }, [done]);
  return shown && done;
}

/** A form's foot: the refusal (pointing at the fields that carry its details), the submit button, "Saved." announced. */
export function SaveFoot({ label, error, fieldCount, saved, disabled, noteId }: { label: string; error: unknown; fieldCount: number; saved: boolean; disabled: boolean; noteId: string | undefined }) {
  const shown = useBriefly(saved);
  return (
    <>
      <ErrorMessage message={error === undefined || error === null ? undefined : summaryWithFieldsOf(error, fieldCount)} />
      <div className="form-actions form-actions-start">
        <Button type="submit" isDisabled={disabled} aria-describedby={noteId}>
          {label}
        </Button>
        <span role="status" className="saved-note">
          {shown ? 'Saved.' : ''}
        </span>
      </div>
    </>
  );
}
