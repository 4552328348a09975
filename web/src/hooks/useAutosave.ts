// Saves the open workflow a moment after the last edit, when autosave is on. A Graphbook 0.13
// file is never rewritten by autosave: the person saves it explicitly.

import { useEffect, useRef } from 'react';
import { saveFile } from '../actions/files';
import { useEditor } from '../store/editor';
import { useUi } from '../store/ui';
import { useDirty } from './useDirty';

export const AUTOSAVE_DELAY_MS = 1500;

export function useAutosave(): void {
  const dirty = useDirty();
  const on = useUi((s) => s.autosave);
  const file = useEditor((s) => s.file);
  const present = useEditor((s) => s.history.present);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => {
    clearTimeout(timer.current);
    if (!on || !dirty || !file || file.format !== 'canonical') return;
    timer.current = setTimeout(() => void saveFile(true), AUTOSAVE_DELAY_MS);
    return () => clearTimeout(timer.current);
  }, [on, dirty, file, present]);
}
