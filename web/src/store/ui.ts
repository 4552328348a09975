// Presentation state: theme, panels, the inspected node, notices, problems from the server.

import { create } from 'zustand';
import type { Problem } from '../protocol';

export type Theme = 'light' | 'dark';
export type InspectorTab = 'output' | 'logs' | 'errors' | 'docs';
export type SideTab = 'files' | 'nodes' | 'runs';

export interface Notice {
  id: number;
  kind: 'info' | 'error';
  text: string;
}

export interface UiState {
  theme: Theme;
  side: SideTab;
  inspector: InspectorTab;
  inspected: string | null;
  autosave: boolean;
  /** Runs started here go on past a node's error (the server's `continue_on_error`). */
  continueOnError: boolean;
  /** Where the node search is open, in client coordinates. */
  search: { x: number; y: number } | null;
  notices: Notice[];
  /** Problems the server reported when the file was opened or a run was refused. */
  serverProblems: Problem[];
  setTheme(theme: Theme): void;
  setSide(side: SideTab): void;
  inspect(node: string | null, tab?: InspectorTab): void;
  setInspector(tab: InspectorTab): void;
  setAutosave(on: boolean): void;
  setContinueOnError(on: boolean): void;
  openSearch(at: { x: number; y: number } | null): void;
  notify(text: string, kind?: Notice['kind']): void;
  dismiss(id: number): void;
  setServerProblems(problems: Problem[]): void;
}

const stored = (key: string): string | null => {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
};
const store = (key: string, value: string): void => {
  try {
    localStorage.setItem(key, value);
  } catch {
    /* storage may be unavailable; the setting then lasts for this page only */
  }
};

function initialTheme(): Theme {
  const saved = stored('graphbook.theme');
  if (saved === 'light' || saved === 'dark') return saved;
  return typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

let noticeId = 0;

export const useUi = create<UiState>()((set, get) => ({
  theme: initialTheme(),
  side: 'nodes',
  inspector: 'output',
  inspected: null,
  autosave: stored('graphbook.autosave') !== 'off',
  continueOnError: stored('graphbook.continueOnError') === 'on',
  search: null,
  notices: [],
  serverProblems: [],
  setTheme(theme) {
    store('graphbook.theme', theme);
    set({ theme });
  },
  setSide(side) {
    set({ side });
  },
  inspect(node, tab) {
    set({ inspected: node, ...(tab ? { inspector: tab } : {}) });
  },
  setInspector(inspector) {
    set({ inspector });
  },
  setAutosave(autosave) {
    store('graphbook.autosave', autosave ? 'on' : 'off');
    set({ autosave });
  },
  setContinueOnError(continueOnError) {
    store('graphbook.continueOnError', continueOnError ? 'on' : 'off');
    set({ continueOnError });
  },
  openSearch(search) {
    set({ search });
  },
  notify(text, kind = 'info') {
    const id = ++noticeId;
    set({ notices: [...get().notices.slice(-3), { id, kind, text }] });
    setTimeout(() => get().dismiss(id), kind === 'error' ? 8000 : 3500);
  },
  dismiss(id) {
    set({ notices: get().notices.filter((n) => n.id !== id) });
  },
  setServerProblems(serverProblems) {
    set({ serverProblems });
  },
}));
