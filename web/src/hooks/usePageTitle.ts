// The tab's title names the open workflow and marks unsaved changes; leaving with unsaved
// changes asks first.

import { useEffect } from 'react';
import { useEditor } from '../store/editor';
import { useDirty } from './useDirty';

export function usePageTitle(): void {
  const path = useEditor((s) => s.file?.path);
  const dirty = useDirty();
  useEffect(() => {
    document.title = path ? `${dirty ? '● ' : ''}${path} · Graphbook` : 'Graphbook';
  }, [path, dirty]);
  useEffect(() => {
    if (!dirty) return;
    const warn = (event: BeforeUnloadEvent): void => event.preventDefault();
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, [dirty]);
}
