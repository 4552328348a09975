// Components (graphbook.components; docs/workflow-format.md "Components"): a group of nodes
// used as one node. Here: the node a component shows (its ports and parameters), making one from
// selected nodes, and unpacking one back into plain nodes, as pure functions over workflows.

import type { Catalog, NodeInfo, ParamInfo } from '../catalog';
import {
  DATA_INPUT,
  type Json,
  type Workflow,
  type WorkflowEdge,
  type WorkflowInput,
  type WorkflowNode,
  coordinate,
  edgeJson,
  edgeKey,
  isObject,
  naturalCompare,
  nodeJson,
  parseCanonical,
} from './format';

export const COMPONENT = 'Component';
/** The catalog names library components `components/NAME`. */
export const LIBRARY_PREFIX = 'components/';
export const COMPONENT_FORMAT = 'graphbook.component';

interface Port {
  node: string;
  port: string;
}

/** A component's inside, read from its `component` JSON. */
export interface ComponentBody {
  doc: string;
  inputs: Record<string, Port>;
  outputs: Record<string, Port>;
  params: Record<string, Port>;
  nodes: WorkflowNode[];
  edges: WorkflowEdge[];
}

/** The library component a node names, or null for an inline one. */
export function libraryOf(component: Record<string, Json> | undefined): { library: string; version: string } | null {
  if (!component || typeof component.library !== 'string') return null;
  return { library: component.library, version: typeof component.version === 'string' ? component.version : '' };
}

function ports(raw: Json | undefined, key: string): Record<string, Port> {
  const found: Record<string, Port> = {};
  if (!isObject(raw)) return found;
  for (const [name, entry] of Object.entries(raw)) {
    if (isObject(entry) && typeof entry.node === 'string' && typeof entry[key] === 'string')
      found[name] = { node: entry.node, port: entry[key] as string };
  }
  return found;
}

/** An inline component's inside; null for a library reference. Throws WorkflowFormatError when it is not one. */
export function bodyOf(component: Record<string, Json>): ComponentBody | null {
  if (libraryOf(component)) return null;
  const inner = parseCanonical(
    { format: 'graphbook.workflow', version: 1, nodes: component.nodes ?? [], edges: component.edges ?? [] },
    'component',
  );
  return {
    doc: typeof component.doc === 'string' ? component.doc : '',
    inputs: ports(component.inputs, 'input'),
    outputs: ports(component.outputs, 'output'),
    params: ports(component.params, 'param'),
    nodes: inner.nodes,
    edges: inner.edges,
  };
}

function portsJson(table: Record<string, Port>, key: string): Record<string, Json> {
  const names = Object.keys(table).sort();
  return Object.fromEntries(names.map((n) => [n, { node: table[n]?.node ?? '', [key]: table[n]?.port ?? '' }]));
}

/** The body as the file holds it, in graphbook.workflow_codec's order (body_json). */
export function bodyJson(body: ComponentBody): Record<string, Json> {
  const nodes = [...body.nodes].sort((a, b) => naturalCompare(a.id, b.id)).map(nodeJson);
  const unique = new Map(body.edges.map((e) => [edgeKey(e), e]));
  const edges = [...unique.values()]
    .sort(
      (a, b) =>
        naturalCompare(a.source, b.source) ||
        (a.output < b.output ? -1 : a.output > b.output ? 1 : 0) ||
        naturalCompare(a.target, b.target) ||
        (a.input < b.input ? -1 : a.input > b.input ? 1 : 0),
    )
    .map((e) => edgeJson(e) as Record<string, Json>);
  return {
    ...(body.doc ? { doc: body.doc } : {}),
    inputs: portsJson(body.inputs, 'input'),
    outputs: portsJson(body.outputs, 'output'),
    params: portsJson(body.params, 'param'),
    nodes,
    edges,
  };
}

/** The inline component without its exposed parameter `name`: the inner node keeps its own value. */
export function hideParam(component: Record<string, Json>, name: string): Record<string, Json> {
  const body = bodyOf(component);
  if (!body || !(name in body.params)) return component;
  const { [name]: _hidden, ...params } = body.params;
  return bodyJson({ ...body, params });
}

/** The inner parameters an inline component could expose and does not yet: each inner node's
 * parameters (as the catalog knows its kind) that no exposed parameter sets. */
export function hiddenParams(component: Record<string, Json>, catalog: Catalog): { node: string; param: string }[] {
  const body = bodyOf(component);
  if (!body) return [];
  const exposed = new Set(Object.values(body.params).map((p) => `${p.node}\0${p.port}`));
  return body.nodes.flatMap((node) =>
    (catalog.nodes[node.type]?.params ?? [])
      .filter((p) => !exposed.has(`${node.id}\0${p.name}`))
      .map((p) => ({ node: node.id, param: p.name })),
  );
}

/** The inline component with `node`'s parameter `param` exposed (named `param`, or
 * `node_param` when that name is taken), and the outer value to set: the inner node's own. */
export function exposeParam(
  component: Record<string, Json>,
  node: string,
  param: string,
): { component: Record<string, Json>; name: string; value: Json | undefined } | null {
  const body = bodyOf(component);
  const inner = body?.nodes.find((n) => n.id === node);
  if (!body || !inner) return null;
  const name = param in body.params ? `${node}_${param}`.replace(/[^A-Za-z0-9_]/g, '_') : param;
  const params = { ...body.params, [name]: { node, port: param } };
  return { component: bodyJson({ ...body, params }), name, value: inner.params[param] };
}

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*(\/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$/;

/** Why `name` cannot name a library component (`components/NAME.json`), as the server's
 * graphbook.components checks it; null when it can. */
export function componentNameProblem(name: string): string | null {
  if (!name.trim()) return 'give the component a name';
  if (name.endsWith('.json')) return 'leave out ".json": it is added to the name';
  if (!NAME.test(name) || name.split('/').includes('..'))
    return "use letters, digits, '_', '-' and '.' (not first), and '/' between folders, e.g. clean_rows";
  return null;
}

/** A title as a component file name: what a name cannot hold becomes '_' (`Clean rows` -> `clean_rows`). */
export function componentFileName(title: string): string {
  const name = title
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, '_')
    .replace(/^[.-]+/, '')
    .replace(/_+$/, '');
  return name || 'component';
}

/** A library component file's content. */
export function libraryFile(component: Record<string, Json>): Record<string, Json> {
  return { format: COMPONENT_FORMAT, version: 1, ...component };
}

const specs = new WeakMap<object, { catalog: Catalog; spec: NodeInfo | undefined }>();

/** The node a component shows: its inputs, outputs and exposed parameters (typed as the inner
 * parameters they set); a library one is the catalog's `components/NAME` entry. */
export function componentSpec(component: Record<string, Json>, catalog: Catalog): NodeInfo | undefined {
  const cached = specs.get(component);
  if (cached && cached.catalog === catalog) return cached.spec;
  const spec = computeSpec(component, catalog, 0);
  specs.set(component, { catalog, spec });
  return spec;
}

function computeSpec(component: Record<string, Json>, catalog: Catalog, depth: number): NodeInfo | undefined {
  const library = libraryOf(component);
  if (library) return catalog.nodes[LIBRARY_PREFIX + library.library];
  let body: ComponentBody | null;
  try {
    body = bodyOf(component);
  } catch {
    return undefined;
  }
  if (!body || depth > 16) return undefined;
  const inner = body;
  const params: ParamInfo[] = Object.keys(inner.params)
    .sort()
    .map((name) => {
      const where = inner.params[name] as Port;
      const node = inner.nodes.find((n) => n.id === where.node);
      const innerSpec = node
        ? node.component
          ? computeSpec(node.component, catalog, depth + 1)
          : catalog.nodes[node.type]
        : undefined;
      const param = innerSpec?.params.find((p) => p.name === where.port);
      const value = node?.params[where.port];
      return {
        name,
        type: param?.type ?? 'string',
        default: value ?? param?.default ?? null,
        description: param?.description ?? `${where.node}.${where.port}`,
        required: false,
      };
    });
  const inputs = Object.keys(inner.inputs).sort();
  return {
    name: COMPONENT,
    kind: inputs.length ? 'step' : 'source',
    category: 'Components',
    params,
    inputs,
    outputs: Object.keys(inner.outputs).sort(),
    doc:
      inner.doc ||
      `A component of ${inner.nodes.length} node${inner.nodes.length === 1 ? '' : 's'}: ${inner.nodes.map((n) => n.id).join(', ')}.`,
    code_hash: '',
    component: '',
    gives: 'any',
    pack: '',
    pack_kind: 'custom',
  };
}

/** The node spec of a canvas node: a component's own, else its type's in the catalog. */
export function specOf(
  data: { type: string; component?: Record<string, Json> },
  catalog: Catalog,
): NodeInfo | undefined {
  return data.component ? componentSpec(data.component, catalog) : catalog.nodes[data.type];
}

function fresh(stem: string, taken: Set<string>): string {
  if (!taken.has(stem)) return stem;
  let n = 2;
  while (taken.has(`${stem}_${n}`)) n++;
  return `${stem}_${n}`;
}

/**
 * The nodes `ids` collapsed into one component node `id`: its inputs are the wires that came in
 * across the selection's edge, its outputs the wires that went out, its parameters the values
 * set on the nodes inside (set on the component node, named after the parameter, or
 * `node_param` where two nodes share a name). Groups lose the nodes; workflow inputs follow them.
 */
export function collapse(workflow: Workflow, ids: ReadonlySet<string>, id: string): Workflow {
  const inside = workflow.nodes.filter((n) => ids.has(n.id));
  const left = Math.min(...inside.map((n) => n.position.x));
  const top = Math.min(...inside.map((n) => n.position.y));
  const body: ComponentBody = { doc: '', inputs: {}, outputs: {}, params: {}, nodes: [], edges: [] };
  body.nodes = inside.map((n) => ({
    ...n,
    position: { x: coordinate(n.position.x - left), y: coordinate(n.position.y - top) },
  }));
  const outer = rewire(workflow.edges, ids, id, body);
  const values = exposeValues(inside, body);
  const node: WorkflowNode = {
    id,
    type: COMPONENT,
    label: '',
    params: values,
    position: { x: left, y: top },
    component: bodyJson(body),
  };
  const groups = (workflow.groups ?? []).map((g) => ({ ...g, nodes: g.nodes.filter((n) => !ids.has(n)) }));
  return withInputs(
    { ...workflow, nodes: [...workflow.nodes.filter((n) => !ids.has(n.id)), node], edges: outer, groups },
    movedInputs(workflow, ids, id, body),
  );
}

/**
 * The wires outside once the nodes `ids` are component `id`: those among them go into `body`,
 * those crossing its edge name one of its inputs or outputs (added to `body`), the rest stay.
 */
function rewire(edges: WorkflowEdge[], ids: ReadonlySet<string>, id: string, body: ComponentBody): WorkflowEdge[] {
  const outer: WorkflowEdge[] = [];
  const inputName = new Map<string, string>();
  const outputName = new Map<string, string>();
  for (const edge of edges) {
    const from = ids.has(edge.source);
    const to = ids.has(edge.target);
    if (from && to) body.edges.push(edge);
    else if (to) {
      const key = `${edge.target}\u0000${edge.input}`;
      let name = inputName.get(key);
      if (!name) {
        name = fresh(edge.input === DATA_INPUT ? DATA_INPUT : edge.input, new Set(Object.keys(body.inputs)));
        inputName.set(key, name);
        body.inputs[name] = { node: edge.target, port: edge.input };
      }
      outer.push({ source: edge.source, output: edge.output, target: id, input: name });
    } else if (from) {
      const key = `${edge.source}\u0000${edge.output}`;
      let name = outputName.get(key);
      if (!name) {
        name = fresh(edge.output, new Set(Object.keys(body.outputs)));
        outputName.set(key, name);
        body.outputs[name] = { node: edge.source, port: edge.output };
      }
      outer.push({ source: id, output: name, target: edge.target, input: edge.input });
    } else outer.push(edge);
  }
  return outer;
}

/** The values set on the nodes `inside`, exposed as `body`'s parameters; the component node's values. */
function exposeValues(inside: WorkflowNode[], body: ComponentBody): Record<string, Json> {
  const values: Record<string, Json> = {};
  const counts = new Map<string, number>();
  for (const node of inside)
    for (const param of Object.keys(node.params)) counts.set(param, (counts.get(param) ?? 0) + 1);
  for (const node of inside) {
    for (const [param, value] of Object.entries(node.params)) {
      const name = (counts.get(param) ?? 0) > 1 ? `${node.id}_${param}` : param;
      body.params[name] = { node: node.id, port: param };
      values[name] = value;
    }
  }
  return values;
}

/** The workflow's inputs once the nodes `ids` are component `id`: those on its nodes follow them there. */
function movedInputs(
  workflow: Workflow,
  ids: ReadonlySet<string>,
  id: string,
  body: ComponentBody,
): Record<string, WorkflowInput> {
  const exposedAs = new Map(Object.entries(body.params).map(([name, p]) => [`${p.node}\u0000${p.port}`, name]));
  return Object.fromEntries(
    Object.entries(workflow.inputs ?? {}).flatMap(([name, given]): [string, WorkflowInput][] => {
      if (!ids.has(given.node)) return [[name, given]];
      const exposed = exposedAs.get(`${given.node}\u0000${given.param}`);
      return exposed ? [[name, { ...given, node: id, param: exposed }]] : [];
    }),
  );
}

function withInputs(workflow: Workflow, inputs: Record<string, WorkflowInput>): Workflow {
  const { inputs: _was, ...rest } = workflow;
  return Object.keys(inputs).length ? { ...rest, inputs } : rest;
}

/** The component node `id` replaced by the nodes inside `body` (ids kept where free), laid out
 * from its position, its parameter values set on them and its wires rewired to the inner ports. */
export function unpack(workflow: Workflow, id: string, body: ComponentBody): { workflow: Workflow; ids: string[] } {
  const node = workflow.nodes.find((n) => n.id === id);
  if (!node) return { workflow, ids: [] };
  const taken = new Set(workflow.nodes.map((n) => n.id).filter((n) => n !== id));
  const rename = new Map<string, string>();
  for (const inner of body.nodes) {
    const next = fresh(inner.id, taken);
    taken.add(next);
    rename.set(inner.id, next);
  }
  const left = Math.min(...body.nodes.map((n) => n.position.x));
  const top = Math.min(...body.nodes.map((n) => n.position.y));
  const params = new Map(body.nodes.map((n) => [n.id, { ...n.params }]));
  for (const [name, value] of Object.entries(node.params)) {
    const where = body.params[name];
    const target = where ? params.get(where.node) : undefined;
    if (where && target) target[where.port] = value;
  }
  const nodes = body.nodes.map((n) => ({
    ...n,
    id: rename.get(n.id) ?? n.id,
    params: params.get(n.id) ?? n.params,
    position: { x: node.position.x + n.position.x - left, y: node.position.y + n.position.y - top },
  }));
  const edges: WorkflowEdge[] = workflow.edges.map((e) => {
    let edge = e;
    const out = e.source === id ? body.outputs[e.output] : undefined;
    if (out) edge = { ...edge, source: rename.get(out.node) ?? out.node, output: out.port };
    const into = e.target === id ? body.inputs[e.input] : undefined;
    if (into) edge = { ...edge, target: rename.get(into.node) ?? into.node, input: into.port };
    return edge;
  });
  for (const e of body.edges)
    edges.push({ ...e, source: rename.get(e.source) ?? e.source, target: rename.get(e.target) ?? e.target });
  const inputs = Object.fromEntries(
    Object.entries(workflow.inputs ?? {}).flatMap(([name, given]): [string, WorkflowInput][] => {
      if (given.node !== id) return [[name, given]];
      const where = body.params[given.param];
      return where ? [[name, { ...given, node: rename.get(where.node) ?? where.node, param: where.port }]] : [];
    }),
  );
  const groups = (workflow.groups ?? []).map((g) => ({ ...g, nodes: g.nodes.filter((n) => n !== id) }));
  const next = withInputs(
    { ...workflow, nodes: [...workflow.nodes.filter((n) => n.id !== id), ...nodes], edges, groups },
    inputs,
  );
  return { workflow: next, ids: nodes.map((n) => n.id) };
}
