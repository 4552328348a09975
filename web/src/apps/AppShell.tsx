// The apps' pages, outside the editor: the theme the editor chose, then the list or one app.

import { useEffect } from 'react';
import { AppPage } from './AppPage';
import { AppsPage } from './AppsPage';
import type { Page } from './route';
import '../styles/apps.css';

function useStoredTheme(): void {
  useEffect(() => {
    let saved: string | null = null;
    try {
      saved = localStorage.getItem('graphbook.theme');
    } catch {
      /* no storage: the system's choice */
    }
    const dark = saved ? saved === 'dark' : matchMedia('(prefers-color-scheme: dark)').matches;
    document.documentElement.dataset.theme = dark ? 'dark' : 'light';
  }, []);
}

export function AppShell({ page }: { page: Exclude<Page, { kind: 'editor' }> }) {
  useStoredTheme();
  useEffect(() => {
    document.title = page.kind === 'app' ? `${page.workflow} · Graphbook app` : 'Graphbook apps';
  }, [page]);
  return page.kind === 'app' ? <AppPage workflow={page.workflow} job={page.job} /> : <AppsPage />;
}
