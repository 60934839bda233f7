/** A role's name as people read it: the built-in ones are stored upper case (OWNER), custom ones as typed. */
export function roleLabel(name: string): string {
  return ['OWNER', 'ADMIN', 'DEVELOPER', 'VIEWER'].includes(name) ? name.charAt(0) + name.slice(1).toLowerCase() : name;
}
