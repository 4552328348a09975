// Groups that older versions of the editor kept in this browser, per file, before groups were
// saved in the workflow file. A file opened without groups takes them over once (its next save
// writes them); a file that has groups, or was saved, no longer needs them.

import type { WorkflowGroup } from '../workflow/format';

const key = (path: string): string => `graphbook.groups:${path}`;

function isGroup(value: unknown): value is WorkflowGroup {
  const g = value as Partial<WorkflowGroup> | null;
  return (
    typeof g?.id === 'string' &&
    typeof g.label === 'string' &&
    typeof g.position?.x === 'number' &&
    typeof g.position.y === 'number' &&
    typeof g.size?.width === 'number' &&
    typeof g.size.height === 'number' &&
    Array.isArray(g.nodes) &&
    g.nodes.every((n) => typeof n === 'string')
  );
}

/** The groups this browser kept for `path`, if any. */
export function legacyGroups(path: string): WorkflowGroup[] {
  try {
    const raw = localStorage.getItem(key(path));
    const data: unknown = raw ? JSON.parse(raw) : [];
    return Array.isArray(data) ? data.filter(isGroup) : [];
  } catch {
    return [];
  }
}

export function forgetLegacyGroups(path: string): void {
  try {
    localStorage.removeItem(key(path));
  } catch {
    /* storage unavailable: nothing was kept either */
  }
}

/** Follows a rename, so that groups not taken over yet are not lost with the old name. */
export function moveLegacyGroups(from: string, to: string): void {
  try {
    const raw = localStorage.getItem(key(from));
    if (raw === null) return;
    localStorage.setItem(key(to), raw);
    localStorage.removeItem(key(from));
  } catch {
    /* storage unavailable */
  }
}
