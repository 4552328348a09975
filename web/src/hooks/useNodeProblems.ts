// The problems shown on one node.

import { useEditor } from '../store/editor';
import { pathPrefix } from '../store/inside';
import { useProblems } from '../store/problems';
import type { Problem } from '../workflow/validate';

const NONE: Problem[] = [];

export function useNodeProblems(id: string): Problem[] {
  const prefix = useEditor((s) => pathPrefix(s.inside));
  return useProblems((s) => s.byNode[prefix + id] ?? NONE);
}
