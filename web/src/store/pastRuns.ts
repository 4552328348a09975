// Past runs opened from the Runs tab: the one shown over the canvas (or several compared side
// by side), and the runs ticked for a comparison.

import { create } from 'zustand';

interface PastRunsState {
  /** Run ids shown over the canvas: one is opened, several are compared; empty: none. */
  open: string[];
  /** Run ids ticked in the Runs tab, in the order they were ticked. */
  picked: string[];
  show(runIds: string[]): void;
  close(): void;
  pick(runId: string, on: boolean): void;
}

export const usePastRuns = create<PastRunsState>()((set) => ({
  open: [],
  picked: [],
  show: (runIds) => set({ open: [...new Set(runIds)] }),
  close: () => set({ open: [] }),
  pick: (runId, on) =>
    set((s) => ({
      picked: on ? [...s.picked.filter((id) => id !== runId), runId] : s.picked.filter((id) => id !== runId),
    })),
}));
