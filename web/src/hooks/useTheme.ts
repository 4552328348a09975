// Puts the chosen theme on the document so the CSS variables follow it.

import { useEffect } from 'react';
import { useUi } from '../store/ui';

export function useTheme(): void {
  const theme = useUi((s) => s.theme);
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
  }, [theme]);
}
