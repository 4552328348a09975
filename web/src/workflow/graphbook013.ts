// Reading Graphbook 0.13 workflow files (React Flow nodes and edges) as canonical workflows,
// exactly as graphbook/formats/graphbook013.py does: groups kept, wires through them made direct,
// data.module kept, exports dropped, subflows refused. (The server converts the files the editor
// opens, and also says what was left out; docs/<Workflow>.md is read there.)

import {
  type Json,
  type Workflow,
  type WorkflowEdge,
  type WorkflowGroup,
  type WorkflowNode,
  WorkflowFormatError,
  isObject,
} from './format';

const RUNNABLE = ['step', 'resource'];
const KNOWN = [...RUNNABLE, 'group', 'export', 'subflow'];
const INNER = '_inner';
const MAX_DEPTH = 32;
/** What 0.13 wrote as `data.module` when the node came from a node file, not a module. */
const NO_MODULE = ['', 'transient_module', 'graphbook.core.decorators', 'custom_nodes'];
const GROUP_SIZE = { width: 300, height: 200 };

type Raw = Record<string, unknown>;

export function isGraphbook013(data: unknown): boolean {
  return isObject(data) && data.type === 'workflow' && !('format' in data);
}

export function fromGraphbook013(data: Raw, name: string): Workflow {
  const { nodes, edges } = data;
  if (!Array.isArray(nodes) || !Array.isArray(edges)) {
    throw new WorkflowFormatError(`${name}: 'nodes' and 'edges' must be lists`);
  }
  const byId = index(nodes, name);
  const out: WorkflowNode[] = [];
  for (const raw of byId.values()) {
    if (RUNNABLE.includes(String(raw.type))) out.push(toNode(raw, byId, name));
  }
  const flat = flatten(
    edges.map((raw) => toEdge(raw, name)),
    byId,
  );
  const groups = toGroups(byId, new Set(out.map((n) => n.id)));
  const workflow: Workflow = { doc: typeof data.doc === 'string' ? data.doc : '', nodes: out, edges: flat };
  return groups.length ? { ...workflow, groups } : workflow;
}

function toGroups(byId: Map<string, Raw>, nodes: Set<string>): WorkflowGroup[] {
  const members = new Map<string, string[]>();
  for (const [id, raw] of byId) {
    const parent: unknown = raw.parentId ?? raw.parentNode;
    if (parent && nodes.has(id)) members.set(String(parent), [...(members.get(String(parent)) ?? []), id]);
  }
  const groups: WorkflowGroup[] = [];
  for (const [id, raw] of byId) {
    if (raw.type !== 'group') continue;
    const label = isObject(raw.data) && typeof raw.data.label === 'string' ? raw.data.label : '';
    const style = isObject(raw.style) ? raw.style : {};
    const width = raw.width || style.width;
    const height = raw.height || style.height;
    const sized = typeof width === 'number' && typeof height === 'number' && width > 0 && height > 0;
    const size = sized ? { width, height } : { ...GROUP_SIZE };
    groups.push({ id, label, position: absolutePosition(raw, byId), size, nodes: members.get(id) ?? [] });
  }
  return groups;
}

function index(rawNodes: unknown[], name: string): Map<string, Raw> {
  const byId = new Map<string, Raw>();
  rawNodes.forEach((raw, i) => {
    const where = `${name}: nodes[${i}]`;
    if (!isObject(raw)) throw new WorkflowFormatError(`${where} must be an object`);
    const { id, type } = raw;
    if ((typeof id !== 'string' && typeof id !== 'number') || id === '') {
      throw new WorkflowFormatError(`${where} needs an 'id'`);
    }
    if (type === 'subflow') {
      const filename = isObject(raw.data) ? raw.data.filename : undefined;
      throw new WorkflowFormatError(
        `${name}: node '${String(id)}' is a subflow of ${typeof filename === 'string' ? filename : 'another file'}; ` +
          'subflows are not supported, so open that file and copy its nodes in',
      );
    }
    if (!KNOWN.includes(String(type))) {
      throw new WorkflowFormatError(
        `${where} (id '${String(id)}') has type ${JSON.stringify(type)}; Graphbook files hold nodes of type ${KNOWN.join(', ')}`,
      );
    }
    if (byId.has(String(id))) throw new WorkflowFormatError(`${name}: two nodes have id '${String(id)}'`);
    byId.set(String(id), raw);
  });
  return byId;
}

function toNode(raw: Raw, byId: Map<string, Raw>, name: string): WorkflowNode {
  const id = String(raw.id);
  const data = raw.data;
  if (!isObject(data) || typeof data.name !== 'string') {
    throw new WorkflowFormatError(`${name}: node '${id}' has no data.name (its node type)`);
  }
  const parameters = data.parameters ?? {};
  if (!isObject(parameters)) throw new WorkflowFormatError(`${name}: node '${id}': data.parameters must be an object`);
  const params: Record<string, Json> = {};
  for (const [key, spec] of Object.entries(parameters)) {
    if (isObject(spec) && spec.value !== undefined && spec.value !== null) params[key] = spec.value as Json;
  }
  const label = typeof data.label === 'string' && data.label !== data.name ? data.label : '';
  const node: WorkflowNode = { id, type: data.name, label, params, position: absolutePosition(raw, byId) };
  const module = data.module;
  return typeof module === 'string' && !NO_MODULE.includes(module) ? { ...node, module } : node;
}

function absolutePosition(raw: Raw, byId: Map<string, Raw>): { x: number; y: number } {
  let x = 0;
  let y = 0;
  let current: Raw | undefined = raw;
  for (let depth = 0; depth < MAX_DEPTH && current; depth++) {
    const position: unknown = current.position;
    if (isObject(position)) {
      x += typeof position.x === 'number' ? position.x : 0;
      y += typeof position.y === 'number' ? position.y : 0;
    }
    const parent: unknown = current.parentId ?? current.parentNode;
    current = parent ? byId.get(String(parent)) : undefined;
  }
  return { x, y };
}

function toEdge(raw: unknown, name: string): WorkflowEdge {
  if (!isObject(raw)) throw new WorkflowFormatError(`${name}: an edge must be an object`);
  for (const key of ['source', 'target']) {
    if (raw[key] === undefined || raw[key] === null || raw[key] === '') {
      throw new WorkflowFormatError(`${name}: an edge has no '${key}'`);
    }
  }
  return {
    source: String(raw.source),
    output: String(raw.sourceHandle || 'out'),
    target: String(raw.target),
    input: String(raw.targetHandle || 'in'),
  };
}

type Pin = [node: string, handle: string];

function flatten(edges: WorkflowEdge[], byId: Map<string, Raw>): WorkflowEdge[] {
  const kind = (id: string): string | undefined => {
    const raw = byId.get(id);
    return raw ? String(raw.type) : undefined;
  };
  const into = new Map<string, Pin[]>();
  for (const edge of edges) {
    if (kind(edge.target) === 'group') {
      const key = JSON.stringify([edge.target, edge.input]);
      into.set(key, [...(into.get(key) ?? []), [edge.source, edge.output]]);
    }
  }
  const sources = (pin: Pin, depth: number): Pin[] => {
    const [node, handle] = pin;
    if (RUNNABLE.includes(kind(node) ?? '')) return [pin];
    if (kind(node) !== 'group' || depth > MAX_DEPTH) return [];
    const other = handle.endsWith(INNER) ? handle.slice(0, -INNER.length) : handle + INNER;
    return (into.get(JSON.stringify([node, other])) ?? []).flatMap((up) => sources(up, depth + 1));
  };
  const flat: WorkflowEdge[] = [];
  for (const edge of edges) {
    if (!RUNNABLE.includes(kind(edge.target) ?? '')) continue;
    for (const [source, output] of sources([edge.source, edge.output], 0)) {
      flat.push({ source, output, target: edge.target, input: edge.input });
    }
  }
  return flat;
}
