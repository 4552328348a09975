// The templates gallery: the templates (fetched once), whether "New" asked for the gallery, and
// the files whose empty canvas had it dismissed.

import { create } from 'zustand';
import { listTemplates } from '../api/templates';
import type { TemplateInfo } from '../protocol';

/** The key of the canvas with no file open. */
export const NO_FILE = '';

export interface TemplatesState {
  templates: TemplateInfo[];
  loaded: boolean;
  error: string | null;
  /** The gallery asked for from "New": shown over the canvas, whatever the canvas holds. */
  open: boolean;
  /** Files (NO_FILE: none open) whose empty canvas no longer shows the gallery. */
  dismissed: string[];
  load(): Promise<void>;
  show(open: boolean): void;
  dismiss(file: string): void;
}

let loading: Promise<void> | null = null;

export const useTemplates = create<TemplatesState>()((set, get) => ({
  templates: [],
  loaded: false,
  error: null,
  open: false,
  dismissed: [],
  load() {
    loading ??= (async () => {
      try {
        set({ templates: (await listTemplates()).templates, loaded: true, error: null });
      } catch (error) {
        set({ error: (error as Error).message });
      }
    })().finally(() => {
      loading = null;
    });
    return loading;
  },
  show(open) {
    set({ open });
    if (open && !get().loaded) void get().load();
  },
  dismiss(file) {
    if (!get().dismissed.includes(file)) set({ dismissed: [...get().dismissed, file] });
  },
}));
