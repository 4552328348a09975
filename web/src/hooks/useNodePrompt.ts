// The question a prompt node is waiting on, if any.

import type { PromptInfo } from '../protocol';
import { useRun } from '../store/run';

export function useNodePrompt(id: string): PromptInfo | undefined {
  return useRun((s) => Object.values(s.prompts).find((p) => p.node_id === id));
}
