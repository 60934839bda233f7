import { Button, ModalDialog } from './controls.tsx';
import { CopyButton } from './CopyButton.tsx';

/**
 * A secret the API answers once, at creation (an API token, a webhook's generated signing secret): shown in a
 * read-only field selected on focus, with a copy button, and never again once the dialog closes.
 */
export function SecretShownOnce({ title, notice, label, value, copyLabel, onClose }: { title: string; notice: string; label: string; value: string; copyLabel: string; onClose: () => void }) {
  return (
    <ModalDialog title={title} isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <div className="form">
        <p className="notice">{notice}</p>
        <div className="secret-value">
          <label htmlFor="secret-shown-once">{label}</label>
          <div className="secret-value-row">
            <input id="secret-shown-once" readOnly value={value} onFocus={(event) => event.target.select()} spellCheck={false} />
            <CopyButton value={value} label={copyLabel} />
          </div>
        </div>
        <div className="form-actions">
          <Button onPress={onClose}>Done</Button>
        </div>
      </div>
    </ModalDialog>
  );
}
