import type { ReactNode } from 'react';
import {
  Button as AriaButton,
  Dialog,
  FieldError,
  Heading,
  Input,
  Label,
  Modal,
  ModalOverlay,
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
}) {
  return (
    <AriaTextField
      className="field"
      value={props.value}
      onChange={props.onChange}
      isRequired={props.isRequired}
      autoFocus={props.autoFocus}
      maxLength={props.maxLength}
      name={props.name}
      autoComplete={props.autoComplete ?? 'off'}
    >
      <Label>{props.label}</Label>
      <Input />
      {props.description === undefined ? null : <Text slot="description">{props.description}</Text>}
      <FieldError />
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
export function ModalDialog({ title, isOpen, onOpenChange, children }: { title: string; isOpen: boolean; onOpenChange: (open: boolean) => void; children: ReactNode }) {
  return (
    <ModalOverlay className="modal-overlay" isOpen={isOpen} onOpenChange={onOpenChange} isDismissable>
      <Modal className="modal">
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
