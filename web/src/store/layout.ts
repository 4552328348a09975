// Groups are not part of the workflow file format, so they are kept in this browser, per file.

import type { Group } from '../workflow/canvas';

const key = (path: string): string => `graphbook.groups:${path}`;

export function loadGroups(path: string): Group[] {
  try {
    const raw = localStorage.getItem(key(path));
    const data: unknown = raw ? JSON.parse(raw) : [];
    return Array.isArray(data) ? (data as Group[]) : [];
  } catch {
    return [];
  }
}

export function saveGroups(path: string, groups: Group[]): void {
  try {
    if (groups.length) localStorage.setItem(key(path), JSON.stringify(groups));
    else localStorage.removeItem(key(path));
  } catch {
    /* storage full or unavailable: groups last for this page only */
  }
}

export function moveGroups(from: string, to: string): void {
  saveGroups(to, loadGroups(from));
  saveGroups(from, []);
}
