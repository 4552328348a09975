// Where node kinds come from (the library, an installed pack, custom_nodes/, the examples): the
// palette's badges and its origin filter, and the help page's line saying where a node is from.

import type { NodeInfo, PackKind } from './catalog';

export type OriginFilter = 'all' | PackKind;

/** The palette's filter choices, in order. */
export const ORIGIN_FILTERS: readonly { value: OriginFilter; label: string }[] = [
  { value: 'all', label: 'All' },
  { value: 'builtin', label: 'Built-in' },
  { value: 'pack', label: 'Packs' },
  { value: 'custom', label: 'Custom' },
  { value: 'example', label: 'Examples' },
];

/**
 * The badge beside a node in the palette: none for the library (most nodes, so the exceptions
 * stand out), the pack's name for an installed pack, `custom` and `example` for the others.
 */
export function originBadge(spec: NodeInfo): string {
  if (spec.pack_kind === 'builtin') return '';
  if (spec.pack_kind === 'pack') return spec.pack || 'pack';
  return spec.pack_kind;
}

/** Where the node comes from, in words (its help page, the palette's tooltip). */
export function originText(spec: NodeInfo): string {
  switch (spec.pack_kind) {
    case 'builtin':
      return spec.pack ? `built-in (${spec.pack})` : 'built-in';
    case 'pack':
      return `node pack ${spec.pack || '(unnamed)'}`;
    case 'example':
      return spec.pack && spec.pack !== 'examples' ? `example (${spec.pack})` : 'example';
    default:
      return 'custom (custom_nodes/)';
  }
}

export function ofOrigin(specs: NodeInfo[], filter: OriginFilter): NodeInfo[] {
  return filter === 'all' ? specs : specs.filter((s) => s.pack_kind === filter);
}

/** How many node kinds each filter shows. */
export function originCounts(specs: NodeInfo[]): Record<OriginFilter, number> {
  const counts: Record<OriginFilter, number> = { all: specs.length, builtin: 0, pack: 0, custom: 0, example: 0 };
  for (const spec of specs) counts[spec.pack_kind]++;
  return counts;
}

/** The filters worth offering: All and each origin the catalog has, or none when it has only one. */
export function originChoices(specs: NodeInfo[]): { value: OriginFilter; label: string; count: number }[] {
  const counts = originCounts(specs);
  const present = ORIGIN_FILTERS.filter((f) => f.value !== 'all' && counts[f.value] > 0);
  if (present.length < 2) return [];
  return ORIGIN_FILTERS.filter((f) => f.value === 'all' || counts[f.value] > 0).map((f) => ({
    ...f,
    count: counts[f.value],
  }));
}
