import { useEffect, useState } from 'react';
import { Button } from './controls.tsx';

/**
 * Copies a value to the clipboard and says so ("Copied" in the button and to screen readers through a status region).
 * Where the clipboard is refused (an insecure origin, a denied permission), it says to copy by hand instead.
 */
export function CopyButton({ value, label, text = 'Copy' }: { value: string; label: string; text?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const timer = setTimeout(() => setState('idle'), 3000);
    return () => clearTimeout(timer);
  }, [state]);
  async function copy() {
    try {
      await navigator.clipboard.writeText(value);
      setState('copied');
    } catch {
      setState('failed');
    }
  }
  return (
    <span className="copy">
      <Button variant="secondary" aria-label={label} onPress={() => void copy()}>
        {state === 'copied' ? 'Copied' : text}
      </Button>
      <span role="status" className={state === 'failed' ? 'copy-note' : 'visually-hidden'}>
        {state === 'copied' ? 'Copied to the clipboard.' : state === 'failed' ? 'The browser refused the clipboard: select the text and copy it.' : ''}
      </span>
    </span>
  );
}
