// The question a prompt node is waiting on, if any.

import type { Prompt } from '../protocol';
import { useRun } from '../store/run';

export function useNodePrompt(id: string): Prompt | undefined {
  return useRun((s) => Object.values(s.prompts).find((p) => p.node_id === id));
}
