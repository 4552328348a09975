// The node catalog as the browser sees it: node kinds, their parameters, outputs and docs, as
// the server sends them (protocol.ts), indexed by name, and the table of which resources fit
// which parameters.

import type { Catalog as CatalogReply, LoadFailure, NodeInfo, ParamInfo } from './protocol';

export type { NodeInfo, ParamInfo };

export type NodeKind = NodeInfo['kind'];
export type PackKind = NodeInfo['pack_kind'];

export interface Catalog {
  version: number;
  nodes: Record<string, NodeInfo>;
  /** Node files that failed to import: shown in the palette with their errors. */
  failures: LoadFailure[];
  /** What a resource gives -> the parameter types it fits (the server's table). */
  fits: Record<string, string[]>;
}

export const EMPTY_CATALOG: Catalog = { version: 0, nodes: {}, failures: [], fits: {} };

export function decodeCatalog(reply: CatalogReply): Catalog {
  return {
    version: reply.version,
    nodes: Object.fromEntries(reply.nodes.map((n) => [n.name, n])),
    failures: reply.failures,
    fits: reply.fits,
  };
}

/** Whether a parameter of `paramType` can take what a resource `gives`, by the server's table (`graphbook.params.accepts`). */
export function accepts(fits: Catalog['fits'], paramType: string, gives: string): boolean {
  if (paramType === 'resource' || gives === 'any') return true;
  const family = paramType.startsWith('list') ? 'list' : paramType;
  return (fits[gives] ?? []).includes(family);
}
