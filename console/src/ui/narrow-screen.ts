import { useSyncExternalStore } from 'react';

/** The width below which the layout turns to a phone's (styles.css uses the same breakpoint in its media queries). */
const NARROW = '(max-width: 40rem)';

function subscribe(onChange: () => void): () => void {
  const query = window.matchMedia(NARROW);
  query.addEventListener('change', onChange);
  return () => query.removeEventListener('change', onChange);
}

/**
 * Whether the screen is phone-narrow now, following rotations and resizes. For what CSS alone cannot change (a
 * navigation that becomes a disclosure); the rest of the narrow layout is media queries.
 */
export function useNarrowScreen(): boolean {
  return useSyncExternalStore(
    subscribe,
    () => window.matchMedia(NARROW).matches,
    () => false,
  );
}
