import { forgetSession, storedSession, type Session } from './oidc.ts';

/**
 * The signed-in session of this tab, and the moment it ends: its access token's expiry (known from the token
 * response, so nothing asks the API whether it still holds) or an API answer of 401 (a key rotated, an account gone).
 */
let current: Session | undefined = storedSession();
let timer: ReturnType<typeof setTimeout> | undefined;
const listeners = new Set<() => void>();

export function currentSession(): Session | undefined {
  if (current !== undefined && current.expiresAt <= Date.now()) expireSession();
  return current;
}

/** Called once a session ends by itself (not by signing out): the application goes back to the sign-in page. */
export function onSessionExpired(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function expireSession(): void {
  if (current === undefined) return;
  current = undefined;
  forgetSession();
  if (timer !== undefined) clearTimeout(timer);
  for (const listener of listeners) listener();
}

function schedule(): void {
  if (timer !== undefined) clearTimeout(timer);
  if (current === undefined) return;
  // Timers longer than 2^31 ms fire at once; tokens live an hour, re-arm in steps when needed.
  const wait = Math.min(current.expiresAt - Date.now(), 2 ** 30);
  timer = setTimeout(() => (current !== undefined && current.expiresAt <= Date.now() ? expireSession() : schedule()), Math.max(wait, 0));
}

/** After the callback stored a new session. */
export function reloadSession(): void {
  current = storedSession();
  schedule();
}

schedule();
