// The node catalog as the browser sees it: node kinds, their parameters, outputs and docs.

import type { Catalog as CatalogReply, LoadFailure, NodeInfo } from './protocol';
import { type Json, isObject } from './workflow/format';

export type NodeKind = 'step' | 'source' | 'batch' | 'prompt' | 'resource';
const KINDS: readonly NodeKind[] = ['step', 'source', 'batch', 'prompt', 'resource'];
export type PackKind = NodeInfo['pack_kind'];
const PACK_KINDS: readonly PackKind[] = ['builtin', 'pack', 'custom', 'example'];

export interface ParamSpec {
  name: string;
  /** string, number, int, float, boolean, function, list, list[T], dict, resource */
  type: string;
  default: Json;
  description: string;
  required: boolean;
}

export interface NodeSpec {
  name: string;
  kind: NodeKind;
  category: string;
  params: ParamSpec[];
  inputs: string[];
  outputs: string[];
  doc: string;
  codeHash: string;
  /** A resource's value type ('string', 'object', ...), 'any' when undeclared. */
  gives: string;
  /** The pack it comes from: a library module ('images'), an installed pack's distribution, 'examples', or '' (a custom_nodes/ file). */
  pack: string;
  /** Where it comes from: the library, an installed pack, the node folder, the examples. */
  packKind: PackKind;
}

export interface Catalog {
  version: number;
  nodes: Record<string, NodeSpec>;
  /** Node files that failed to import: shown in the palette with their errors. */
  failures: LoadFailure[];
}

export const EMPTY_CATALOG: Catalog = { version: 0, nodes: {}, failures: [] };

const str = (value: unknown, fallback = ''): string => (typeof value === 'string' ? value : fallback);
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);

export function decodeParam(raw: unknown, name?: string): ParamSpec {
  const data = isObject(raw) ? raw : {};
  return {
    name: str(data.name, name ?? ''),
    type: str(data.type, 'string'),
    default: (data.default ?? null) as Json,
    description: str(data.description),
    required: data.required === true,
  };
}

function decodeParams(raw: unknown): ParamSpec[] {
  if (Array.isArray(raw)) return raw.map((p) => decodeParam(p));
  if (isObject(raw)) return Object.entries(raw).map(([name, p]) => decodeParam(p, name));
  return [];
}

export function decodeNodeSpec(raw: unknown): NodeSpec {
  const data = isObject(raw) ? raw : {};
  const kind = KINDS.includes(data.kind as NodeKind) ? (data.kind as NodeKind) : 'step';
  const outputs = Array.isArray(data.outputs) ? strings(data.outputs) : kind === 'resource' ? ['resource'] : ['out'];
  const inputs = Array.isArray(data.inputs) ? strings(data.inputs) : kind === 'resource' || kind === 'source' ? [] : ['in'];
  return {
    name: str(data.name),
    kind,
    category: str(data.category),
    params: decodeParams(data.params ?? data.parameters),
    inputs,
    outputs,
    doc: str(data.doc),
    codeHash: str(data.code_hash),
    gives: str(data.gives, 'any'),
    pack: str(data.pack),
    packKind: PACK_KINDS.includes(data.pack_kind as PackKind) ? (data.pack_kind as PackKind) : 'custom',
  };
}

export function decodeCatalog(reply: CatalogReply): Catalog {
  const nodes = reply.nodes.map(decodeNodeSpec);
  return { version: reply.version, nodes: Object.fromEntries(nodes.map((n) => [n.name, n])), failures: reply.failures };
}

export function isResourceParam(param: ParamSpec): boolean {
  return param.type === 'resource';
}

export function paramOf(spec: NodeSpec | undefined, name: string): ParamSpec | undefined {
  return spec?.params.find((p) => p.name === name);
}

const FITS: Record<string, string[]> = {
  string: ['string', 'function'],
  int: ['int', 'number', 'float'],
  number: ['number', 'float', 'int'], // a whole number is checked when the run starts
  float: ['number', 'float'],
  boolean: ['boolean'],
  function: ['function'],
  list: ['list'],
  dict: ['dict'],
};

/** Whether a parameter of `paramType` can take what a resource `gives` (graphbook/params.py `accepts`). */
export function accepts(paramType: string, gives: string): boolean {
  if (paramType === 'resource' || gives === 'any') return true;
  const family = paramType.startsWith('list') ? 'list' : paramType;
  return (FITS[gives] ?? []).includes(family);
}
