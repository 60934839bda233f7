import { useState, type FormEvent, type ReactNode } from 'react';
import {
  Button as AriaButton,
  Dialog,
  FieldError,
  Form,
  Heading,
  Input,
  Label,
  Menu,
  MenuItem,
  MenuTrigger,
  Modal,
  ModalOverlay,
  Popover,
  Text,
  TextField as AriaTextField,
  type ButtonProps,
} from 'react-aria-components';

/**
 * The few building blocks every screen uses: React Aria for behaviour and accessibility, styles.css for the look.
 *
 * A form ignores a second submit while its request runs; its button is neither disabled (a focused button that gets
 * disabled drops the focus to the page, and Escape no longer reaches the dialog) nor given React Aria's `isPending`
 * (its announcement points at the button, which a success removes, and leaves an unlabelled live-region node).
 */
export function Button({ variant = 'primary', className, ...props }: ButtonProps & { variant?: 'primary' | 'secondary' | 'danger' | 'quiet-danger' }) {
  return <AriaButton {...props} className={`button button-${variant}${typeof className === 'string' ? ` ${className}` : ''}`} />;
}

export function TextField(props: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  description?: ReactNode;
  isRequired?: boolean;
  autoFocus?: boolean;
  maxLength?: number;
  name?: string;
  autoComplete?: string;
  /** The server's message for this field (a 400's detail): the field is marked invalid and shows it. */
  errorMessage?: string | undefined;
  type?: 'text' | 'password' | 'url' | 'number';
  placeholder?: string;
  inputMode?: 'numeric' | 'text';
  className?: string;
}) {
  return (
    <AriaTextField
      className={`field${props.className === undefined ? '' : ` ${props.className}`}`}
      value={props.value}
      isInvalid={props.errorMessage !== undefined}
      type={props.type ?? 'text'}
      onChange={props.onChange}
      isRequired={props.isRequired}
      autoFocus={props.autoFocus}
      maxLength={props.maxLength}
      name={props.name}
      autoComplete={props.autoComplete ?? 'off'}
    >
      <Label>{props.label}</Label>
      <Input placeholder={props.placeholder} inputMode={props.inputMode} />
      {props.description === undefined ? null : <Text slot="description">{props.description}</Text>}
      <FieldError>{props.errorMessage}</FieldError>
    </AriaTextField>
  );
}

/** A message where the action was taken; `role=alert` so it is announced. Nothing when there is none. */
export function ErrorMessage({ message }: { message: string | undefined }) {
  if (message === undefined) return null;
  return (
    <p className="error-message" role="alert">
      {message}
    </p>
  );
}

/** A modal dialog (focus trapped, Escape closes, focus back to the trigger), titled by `title`. */
export function ModalDialog({ title, isOpen, onOpenChange, children, wide }: { title: string; isOpen: boolean; onOpenChange: (open: boolean) => void; children: ReactNode; wide?: boolean }) {
  return (
    <ModalOverlay className="modal-overlay" isOpen={isOpen} onOpenChange={onOpenChange} isDismissable>
      <Modal className={wide === true ? 'modal modal-wide' : 'modal'}>
        <Dialog className="dialog">
          <Heading slot="title" className="dialog-title">
            {title}
          </Heading>
          {children}
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}

export function Spinner({ label }: { label: string }) {
  return (
    <p className="loading" role="status">
      {label}
    </p>
  );
}

/** A native select with a visible label: keyboard, screen readers and phones handle it best. */
export function SelectField<Value extends string>(props: {
  label: string;
  value: Value;
  onChange: (value: Value) => void;
  options: readonly { value: Value; label: string }[];
  description?: ReactNode;
  errorMessage?: string | undefined;
  id: string;
}) {
  const describedBy = [props.description === undefined ? '' : `${props.id}-description`, props.errorMessage === undefined ? '' : `${props.id}-error`].filter((id) => id !== '').join(' ');
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      <select
        id={props.id}
        value={props.value}
        onChange={(event) => props.onChange(event.target.value as Value)}
        aria-invalid={props.errorMessage === undefined ? undefined : true}
        aria-describedby={describedBy === '' ? undefined : describedBy}
      >
        {props.options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
      {props.description === undefined ? null : (
        <span id={`${props.id}-description`} className="field-description">
          {props.description}
        </span>
      )}
      {props.errorMessage === undefined ? null : (
        <span id={`${props.id}-error`} className="field-error">
          {props.errorMessage}
        </span>
      )}
    </div>
  );
}

/** A native checkbox with its label beside it. */
export function CheckboxField({ label, checked, onChange, description, id }: { label: string; checked: boolean; onChange: (checked: boolean) => void; description?: string; id: string }) {
  return (
    <div className="checkbox-field">
      <input id={id} type="checkbox" checked={checked} onChange={(event) => onChange(event.target.checked)} aria-describedby={description === undefined ? undefined : `${id}-description`} />
      <label htmlFor={id}>{label}</label>
      {description === undefined ? null : (
        <span id={`${id}-description`} className="field-description">
          {description}
        </span>
      )}
    </div>
  );
}

type State = 'READY' | 'QUEUED' | 'BUILDING' | 'BUILD_ERROR' | 'DEPLOYING' | 'DEPLOYMENT_ERROR' | 'DEPLOYED' | 'STOPPING' | 'STOP_ERROR' | 'STOPPED' | 'RESTARTING' | 'RESTART_ERROR' | 'RESTARTED' | 'CANCELING' | 'CANCELED' | 'DELETING' | 'DELETE_ERROR' | 'DELETED';

/** A state's tone: running, working on it, failed, or at rest. */
export function toneOf(state: string): 'ok' | 'busy' | 'error' | 'idle' {
  if (state.endsWith('_ERROR')) return 'error';
  if (state === 'DEPLOYED' || state === 'RESTARTED') return 'ok';
  if (['QUEUED', 'BUILDING', 'DEPLOYING', 'STOPPING', 'RESTARTING', 'CANCELING', 'DELETING'].includes(state)) return 'busy';
  return 'idle';
}

/** DEPLOYMENT_ERROR → "Deployment error". */
export function humanState(state: string): string {
  const words = state.toLowerCase().replaceAll('_', ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A deployment state as a chip: colour and a shape (dot, ring, cross) so it reads without colour too. */
export function StatusChip({ state, label }: { state: State | string; label?: string }) {
  const tone = toneOf(state);
  return (
    <span className={`chip chip-${tone}`} data-state={state}>
      <span aria-hidden="true" className="chip-mark">
        {tone === 'error' ? '✕' : tone === 'ok' ? '●' : tone === 'busy' ? '◌' : '○'}
      </span>
      {label ?? humanState(state)}
    </span>
  );
}

/** "3 min ago", "2 h ago", or the date; the exact time in the title. */
export function RelativeTime({ at }: { at: string | null | undefined }) {
  if (at === null || at === undefined || at === '') return <span className="muted">never</span>;
  const date = new Date(at);
  const seconds = Math.round((Date.now() - date.getTime()) / 1000);
  const text =
    seconds < 45 ? 'just now' : seconds < 3600 ? `${Math.round(seconds / 60)} min ago` : seconds < 86_400 ? `${Math.round(seconds / 3600)} h ago` : date.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric' });
  return (
    <time dateTime={at} title={date.toLocaleString('en-GB')}>
      {text}
    </time>
  );
}

/**
 * Deleting something that takes more with it: the person types its name to confirm, the button stays disabled until
 * it matches, and the API's refusal is shown in the dialog.
 */
export function ConfirmByNameDialog(props: {
  title: string;
  name: string;
  explanation: string;
  confirmLabel: string;
  pending: boolean;
  error: string | undefined;
  onConfirm: () => void;
  onClose: () => void;
}) {
  const [typed, setTyped] = useState('');
  function submit(event: FormEvent) {
    event.preventDefault();
    if (typed === props.name && !props.pending) props.onConfirm();
  }
  return (
    <ModalDialog title={props.title} isOpen onOpenChange={(open) => (open ? undefined : props.onClose())}>
      <Form onSubmit={submit} className="form">
        <p>{props.explanation}</p>
        <TextField label={`Type ${props.name} to confirm`} value={typed} onChange={setTyped} isRequired autoFocus />
        <div className="form-foot">
          <ErrorMessage message={props.error} />
          <div className="form-actions">
            <Button variant="secondary" onPress={props.onClose}>
              Cancel
            </Button>
            <Button type="submit" variant="danger" isDisabled={typed !== props.name}>
              {props.confirmLabel}
            </Button>
          </div>
        </div>
      </Form>
    </ModalDialog>
  );
}

/** A "⋯" menu of actions on one row, named after it ("Actions for web"). */
export function ActionsMenu({ label, actions, onAction }: { label: string; actions: readonly { id: string; label: string; danger?: boolean; isDisabled?: boolean }[]; onAction: (id: string) => void }) {
  return (
    <MenuTrigger>
      <AriaButton className="button button-secondary actions-trigger" aria-label={label}>
        <span aria-hidden="true">⋯</span>
      </AriaButton>
      <Popover className="popover" placement="bottom end">
        <Menu className="menu" aria-label={label} onAction={(key) => onAction(String(key))} disabledKeys={actions.filter((action) => action.isDisabled === true).map((action) => action.id)}>
          {actions.map((action) => (
            <MenuItem key={action.id} id={action.id} className={`menu-item${action.danger === true ? ' menu-item-danger' : ''}`}>
              {action.label}
            </MenuItem>
          ))}
        </Menu>
      </Popover>
    </MenuTrigger>
  );
}

/** The way back up: organization › project › environment › service. */
export function Breadcrumbs({ children }: { children: ReactNode }) {
  return (
    <nav aria-label="Breadcrumb" className="breadcrumbs">
      <ol>{children}</ol>
    </nav>
  );
}
