// What the open workflow's nodes were set to when its last run (seen here) started, so a node
// changed since can say it will run again.

import { create } from 'zustand';
import type { FlowNode, GraphNodeData } from '../workflow/flow';

export interface RanWith {
  /** The workflow file the run was of, and the run. */
  workflow: string | null;
  runId: string | null;
  /** Per node id: what the run used of it (`settingsKey`). */
  settings: Record<string, string>;
  take(workflow: string, runId: string, nodes: FlowNode[]): void;
}

/** What decides whether a node runs again: its type, parameters, mode and inside. */
export function settingsKey(data: GraphNodeData): string {
  return JSON.stringify([data.type, data.params, data.mode ?? null, data.component ?? null]);
}

export const useRanWith = create<RanWith>()((set) => ({
  workflow: null,
  runId: null,
  settings: {},
  take(workflow, runId, nodes) {
    const settings: Record<string, string> = {};
    for (const node of nodes) if (node.type === 'graph') settings[node.id] = settingsKey(node.data);
    set({ workflow, runId, settings });
  },
}));

/** Whether node `id` (now `data`) differs from what the last run of `workflow` used, or is new since. */
export function changedSinceRun(
  state: RanWith,
  workflow: string | undefined,
  id: string,
  data: GraphNodeData,
): boolean {
  if (!workflow || state.workflow !== workflow) return false;
  return state.settings[id] !== settingsKey(data);
}
