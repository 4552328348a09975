// The live run state of one node, when the run is of the open workflow.

import { useEditor } from '../store/editor';
import { useRun } from '../store/run';
import type { NodeRun } from '../store/runState';

export function useNodeRun(id: string): NodeRun | undefined {
  const path = useEditor((s) => s.file?.path);
  return useRun((s) => (s.run && s.run.workflow === path ? s.run.nodes[id] : undefined));
}
