// Presentation state: theme, panels, the inspected node, notices, problems from the server.

import { type StoreApi, create } from 'zustand';
import type { LooseEnd } from '../workflow/connections';
import type { ImagePreview } from '../preview';
import type { Problem } from '../protocol';

export type Theme = 'light' | 'dark';
export type InspectorTab = 'output' | 'logs' | 'errors' | 'docs';
export type SideTab = 'files' | 'nodes' | 'runs' | 'queue';
/** The panels around the canvas that fold away: the sidebar, the inspector, the console below. */
export type Panel = 'side' | 'inspector' | 'console';
export type Panels = Record<Panel, boolean>;

export interface ContextMenu {
  x: number;
  y: number;
  on: 'pane' | 'node' | 'edge' | 'group' | 'comment';
  id?: string;
}

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
  /** Which panels are open (kept in this browser). */
  panels: Panels;
  /** Where the node search is open, in client coordinates; `from`: a wire dropped there to join. */
  search: { x: number; y: number; from?: LooseEnd } | null;
  notices: Notice[];
  /** The large image viewer: the images it pages through, and which is shown. */
  viewer: { images: ImagePreview[]; index: number } | null;
  /** The right-click menu: where (client coordinates) and on what. */
  menu: ContextMenu | null;
  /** Problems the server reported when the file was opened or a run was refused. */
  serverProblems: Problem[];
  /** The overlay listing the keys (`?`). */
  shortcuts: boolean;
  /** Opens or closes the keys overlay; with no `open`, toggles it. */
  showShortcuts(open?: boolean): void;
  setTheme(theme: Theme): void;
  setSide(side: SideTab): void;
  inspect(node: string | null, tab?: InspectorTab): void;
  setInspector(tab: InspectorTab): void;
  setAutosave(on: boolean): void;
  setContinueOnError(on: boolean): void;
  /** Opens or closes a panel; with no `open`, toggles it. */
  togglePanel(panel: Panel, open?: boolean): void;
  openSearch(at: { x: number; y: number; from?: LooseEnd } | null): void;
  notify(text: string, kind?: Notice['kind']): void;
  openMenu(menu: ContextMenu | null): void;
  view(images: ImagePreview[], index: number): void;
  closeViewer(): void;
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

/** Below this width the inspector starts folded, so that the canvas keeps room for a pipeline. */
const WIDE = 1400;

function initialPanels(): Panels {
  const wide = typeof window === 'undefined' || window.innerWidth >= WIDE;
  const defaults: Panels = { side: true, inspector: wide, console: false };
  try {
    const saved = JSON.parse(stored('graphbook.panels') ?? 'null') as Partial<Panels> | null;
    return { ...defaults, ...(saved && typeof saved === 'object' ? saved : {}) };
  } catch {
    return defaults;
  }
}

let noticeId = 0;

type SetUi = StoreApi<UiState>['setState'];
type GetUi = StoreApi<UiState>['getState'];

/** What the page starts with: the settings kept in this browser, nothing open over the canvas. */
function initialUi(): Pick<
  UiState,
  | 'theme'
  | 'side'
  | 'inspector'
  | 'inspected'
  | 'autosave'
  | 'continueOnError'
  | 'panels'
  | 'search'
  | 'notices'
  | 'menu'
  | 'viewer'
  | 'serverProblems'
  | 'shortcuts'
> {
  return {
    theme: initialTheme(),
    side: 'nodes',
    inspector: 'output',
    inspected: null,
    autosave: stored('graphbook.autosave') !== 'off',
    continueOnError: stored('graphbook.continueOnError') === 'on',
    panels: initialPanels(),
    search: null,
    notices: [],
    menu: null,
    viewer: null,
    serverProblems: [],
    shortcuts: false,
  };
}

/** The settings kept in this browser: theme, autosave, continue on error, open panels. */
function settingActions(
  set: SetUi,
  get: GetUi,
): Pick<UiState, 'setTheme' | 'setAutosave' | 'setContinueOnError' | 'togglePanel'> {
  return {
    setTheme(theme) {
      store('graphbook.theme', theme);
      set({ theme });
    },
    setAutosave(autosave) {
      store('graphbook.autosave', autosave ? 'on' : 'off');
      set({ autosave });
    },
    setContinueOnError(continueOnError) {
      store('graphbook.continueOnError', continueOnError ? 'on' : 'off');
      set({ continueOnError });
    },
    togglePanel(panel, open) {
      const panels = { ...get().panels, [panel]: open ?? !get().panels[panel] };
      store('graphbook.panels', JSON.stringify(panels));
      set({ panels });
    },
  };
}

/** Which tab each panel shows and which node the inspector follows. */
function tabActions(
  set: SetUi,
  get: GetUi,
): Pick<UiState, 'setSide' | 'inspect' | 'setInspector' | 'setServerProblems'> {
  return {
    setSide(side) {
      set({ side });
    },
    inspect(node, tab) {
      // Asking for a tab (an error link, a node's docs button) opens a folded inspector.
      set({ inspected: node, ...(tab ? { inspector: tab } : {}) });
      if (tab && node && !get().panels.inspector) get().togglePanel('inspector', true);
    },
    setInspector(inspector) {
      set({ inspector });
    },
    setServerProblems(serverProblems) {
      set({ serverProblems });
    },
  };
}

/** What opens over the canvas for a while: notices, menus, the node search, the image viewer, the keys. */
function overlayActions(
  set: SetUi,
  get: GetUi,
): Pick<UiState, 'showShortcuts' | 'openSearch' | 'notify' | 'openMenu' | 'view' | 'closeViewer' | 'dismiss'> {
  return {
    showShortcuts(open) {
      set({ shortcuts: open ?? !get().shortcuts });
    },
    openSearch(search) {
      set({ search });
    },
    notify(text, kind = 'info') {
      const id = ++noticeId;
      set({ notices: [...get().notices.slice(-3), { id, kind, text }] });
      setTimeout(() => get().dismiss(id), kind === 'error' ? 8000 : 3500);
    },
    openMenu(menu) {
      set({ menu });
    },
    view(images, index) {
      if (images.length) set({ viewer: { images, index: Math.max(0, Math.min(index, images.length - 1)) } });
    },
    closeViewer() {
      set({ viewer: null });
    },
    dismiss(id) {
      set({ notices: get().notices.filter((n) => n.id !== id) });
    },
  };
}

export const useUi = create<UiState>()((set, get) => ({
  ...initialUi(),
  ...settingActions(set, get),
  ...tabActions(set, get),
  ...overlayActions(set, get),
}));
