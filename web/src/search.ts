// Finding node kinds by name, category, origin (pack) or docs; names that start with the query come first.

import type { NodeInfo } from './catalog';
import { type OriginFilter, ofOrigin, originText } from './origins';

/**
 * The specs that match `query`, best first; among equal matches (every spec, for an empty query)
 * those of `near`'s category come first, then those of its pack: a wire dropped from a node
 * lists its own kind's nodes before the whole library.
 */
export function searchNodes(specs: NodeInfo[], query: string, near?: NodeInfo): NodeInfo[] {
  const q = query.trim().toLowerCase();
  const scored = specs
    .map((spec) => ({ spec, score: score(spec, q), close: affinity(spec, near) }))
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || b.close - a.close || a.spec.name.localeCompare(b.spec.name));
  return scored.map((s) => s.spec);
}

function affinity(spec: NodeInfo, near: NodeInfo | undefined): number {
  if (!near) return 0;
  if (spec.category === near.category) return 2;
  return spec.pack === near.pack && spec.pack_kind === near.pack_kind ? 1 : 0;
}

function score(spec: NodeInfo, q: string): number {
  if (!q) return 1;
  const name = spec.name.toLowerCase();
  if (name === q) return 100;
  if (name.startsWith(q)) return 50;
  if (name.includes(q)) return 30;
  if (spec.category.toLowerCase().includes(q)) return 20;
  if (originText(spec).toLowerCase().includes(q)) return 15;
  if (subsequence(q, name)) return 10;
  return spec.doc.toLowerCase().includes(q) ? 5 : 0;
}

function subsequence(q: string, text: string): boolean {
  let i = 0;
  for (const ch of text) if (ch === q[i]) i++;
  return i === q.length;
}

/** The library's categories in the order a pipeline runs through them; other categories follow by name, "Other" last. */
export const CATEGORY_ORDER: readonly string[] = ['Sources', 'Tables', 'Images', 'Models', 'Curation', 'Sinks'];

function categoryRank(category: string): number {
  const at = CATEGORY_ORDER.indexOf(category);
  return at >= 0 ? at : category === 'Other' ? CATEGORY_ORDER.length + 1 : CATEGORY_ORDER.length;
}

/** Categories in order, each with its node kinds by name; uncategorised ones under "Other". */
export function byCategory(specs: NodeInfo[]): [string, NodeInfo[]][] {
  const groups = new Map<string, NodeInfo[]>();
  for (const spec of specs) {
    const category = spec.category || 'Other';
    groups.set(category, [...(groups.get(category) ?? []), spec]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => categoryRank(a) - categoryRank(b) || a.localeCompare(b))
    .map(([c, list]) => [c, list.sort((a, b) => a.name.localeCompare(b.name))]);
}

/** What the palette lists: the node kinds of one origin (or all), by category, or the matches of a search among them. */
export function paletteGroups(specs: NodeInfo[], query: string, origin: OriginFilter): [string, NodeInfo[]][] {
  const shown = ofOrigin(specs, origin);
  return query.trim() ? [['Results', searchNodes(shown, query)]] : byCategory(shown);
}

export function firstLine(doc: string): string {
  return (
    doc
      .split(/\n\s*\n/)[0]
      ?.replace(/\s+/g, ' ')
      .trim() ?? ''
  );
}
