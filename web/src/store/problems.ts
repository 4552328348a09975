// Problems per node: the client's own checks of the live document, plus what the server said
// about the file (until the document changes).

import { create } from 'zustand';
import type { Problem as ServerProblem } from '../protocol';
import { type Problem, validate } from '../workflow/validate';

export const WORKFLOW = '';

export interface ProblemsState {
  byNode: Record<string, Problem[]>;
  total: number;
}

export const useProblems = create<ProblemsState>()(() => ({ byNode: {}, total: 0 }));

export function mergeProblems(client: Problem[], server: ServerProblem[]): Record<string, Problem[]> {
  const byNode: Record<string, Problem[]> = {};
  const add = (node: string, problem: Problem): void => {
    const list = byNode[node] ?? [];
    if (!list.some((p) => sameProblem(p.message, problem.message))) byNode[node] = [...list, problem];
  };
  for (const p of server) add(p.node_id ?? WORKFLOW, { node: p.node_id ?? WORKFLOW, message: p.message, fix: p.fix });
  for (const p of client) add(p.node, p);
  return byNode;
}

/** Messages that differ only in quoting or spacing say the same thing. */
export function sameProblem(a: string, b: string): boolean {
  const plain = (text: string): string => text.replace(/["'`\s]/g, '').toLowerCase();
  return plain(a) === plain(b);
}

export { validate };
