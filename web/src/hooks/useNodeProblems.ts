// The problems shown on one node.

import { useProblems } from '../store/problems';
import type { Problem } from '../workflow/validate';

const NONE: Problem[] = [];

export function useNodeProblems(id: string): Problem[] {
  return useProblems((s) => s.byNode[id] ?? NONE);
}
