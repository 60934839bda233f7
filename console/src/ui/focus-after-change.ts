import { useEffect, useState } from 'react';

/**
 * Keeps the keyboard where it was across a list re-drawn by its own action (a row moved earlier, a service moved to
 * another stage): after `data` changes, the first of the asked element ids that exists and is enabled gets focus (the
 * button pressed, or its partner when the row reached an end and the pressed one is disabled). Answers the setter.
 */
export function useFocusAfterChange(data: unknown): (ids: string[]) => void {
  const [ids, setIds] = useState<string[]>([]);
  useEffect(() => {
    if (ids.length === 0) return;
    for (const id of ids) {
      const element = document.getElementById(id);
      if (element !== null && !(element as HTMLButtonElement).disabled) {
        element.focus();
        break;
      }
    }
    setIds([]);
  }, [data, ids]);
  return setIds;
}
