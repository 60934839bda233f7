/**
 * Why the controls beside it are disabled (auth/permissions.ts): a visible sentence the disabled buttons point to with
 * `aria-describedby`, so the reason is read with them and seen without hovering. Nothing when the caller may act.
 */
export function PermissionNote({ id, reason }: { id: string; reason: string | undefined }) {
  if (reason === undefined) return null;
  return (
    <p id={id} className="permission-note">
      {reason}
    </p>
  );
}
