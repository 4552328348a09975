// The workflows folder as the file panel shows it.

import { create } from 'zustand';
import { listWorkflows } from '../api/workflows';
import type { WorkflowFile } from '../protocol';

export interface FilesState {
  files: WorkflowFile[];
  error: string | null;
  refresh(): Promise<void>;
}

/** The listing under way: a second ask while it runs gets the same one. */
let listing: Promise<void> | null = null;

export const useFiles = create<FilesState>()((set) => ({
  files: [],
  error: null,
  refresh() {
    listing ??= (async () => {
      try {
        const { files } = await listWorkflows();
        set({ files: [...files].sort((a, b) => a.path.localeCompare(b.path)), error: null });
      } catch (error) {
        set({ error: (error as Error).message });
      }
    })().finally(() => {
      listing = null;
    });
    return listing;
  },
}));
