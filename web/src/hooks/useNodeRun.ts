// The run state of one node in the open workflow's current run, or its last one seen here.

import { useEditor } from '../store/editor';
import { runOf, useRun } from '../store/run';
import type { NodeRun } from '../store/runState';

export function useNodeRun(id: string): NodeRun | undefined {
  const path = useEditor((s) => s.file?.path);
  return useRun((s) => runOf(s, path)?.nodes[id]);
}
