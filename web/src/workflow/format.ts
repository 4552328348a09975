// The canonical workflow file (docs/workflow-format.md): its types, reading, and writing it
// byte for byte as graphbook.workflow_codec does, so a save from the browser diffs like one from Python.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export const FORMAT = 'graphbook.workflow';
export const VERSION = 1;
export const DATA_INPUT = 'in';
export const RESOURCE_OUTPUT = 'resource';

export interface WorkflowNode {
  id: string;
  type: string;
  label: string;
  /** The Python module that defines the type (a Graphbook 0.13 file's `data.module`); kept as it is. */
  module?: string;
  /** The width set by resizing the node on the canvas. */
  width?: number;
  /** Folded on the canvas to its title and ports. */
  collapsed?: boolean;
  /** Not run: `bypass` passes its input through, `mute` lets nothing through; left out when it runs. */
  mode?: NodeMode;
  /** Its colour on the canvas (one of NODE_COLORS); left out when it has none. */
  color?: NodeColor;
  params: Record<string, Json>;
  position: { x: number; y: number };
  /** A component node's inside (type `Component`): its nodes, edges and exposed ports and
   * parameters, or `{library, version}` naming a library component; kept as the file has it. */
  component?: Record<string, Json>;
}

/** The colours a node may be given (graphbook.workflow_parts.NODE_COLORS, the same list). */
export const NODE_COLORS = ['red', 'orange', 'yellow', 'green', 'cyan', 'blue', 'purple', 'grey'] as const;
export type NodeColor = (typeof NODE_COLORS)[number];

/** Whether a node runs (graphbook.modes); `active` is never written. */
export type NodeMode = 'active' | 'bypass' | 'mute';

export interface Point {
  x: number;
  y: number;
}

export interface WorkflowEdge {
  source: string;
  output: string;
  target: string;
  input: string;
  /** Reroute points the wire bends through on the canvas, source to target; running ignores them. */
  points?: Point[];
}

/** A labelled box around nodes on the canvas; running the workflow ignores it. */
export interface WorkflowGroup {
  id: string;
  label: string;
  /** Top-left corner, absolute on the canvas. */
  position: { x: number; y: number };
  size: { width: number; height: number };
  /** Ids of the nodes inside; a node is in one group at most. */
  nodes: string[];
}

/** A note on the canvas (Markdown); running the workflow ignores it. */
export interface WorkflowComment {
  id: string;
  text: string;
  position: { x: number; y: number };
  width: number;
}

/** A node parameter the workflow takes as an input, by name (graphbook.inputs); its
 * bounds, choices and picker narrow it for an app's form (docs/apps.md). */
export interface WorkflowInput extends InputNarrowing {
  node: string;
  param: string;
  description?: string;
}

/** What an input may add to its parameter's type: bounds, choices, how an app asks for it. */
export interface InputNarrowing {
  minimum?: number;
  maximum?: number;
  choices?: Json[];
  picker?: Picker;
  accept?: string[];
}

export const PICKERS = ['file', 'folder', 'image'] as const;
export type Picker = (typeof PICKERS)[number];

/** How an app shows an output (graphbook.workflow_parts.OUTPUT_KINDS). */
export const OUTPUT_KINDS = ['images', 'table', 'file', 'text'] as const;
export type OutputKind = (typeof OUTPUT_KINDS)[number];

/** A node output the workflow shows as a result, by name (graphbook.outputs). */
export interface WorkflowOutput {
  node: string;
  output: string;
  kind: OutputKind;
  description?: string;
}

/** What an input may be called (graphbook.workflow_parts.INPUT_NAME). */
export const INPUT_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

export interface Workflow {
  doc: string;
  nodes: WorkflowNode[];
  edges: WorkflowEdge[];
  /** Input name -> the parameter it sets; left out, like the file's `inputs` key, when there are none. */
  inputs?: Record<string, WorkflowInput>;
  /** Output name -> the node output it shows; left out when there are none. */
  outputs?: Record<string, WorkflowOutput>;
  /** Left out, like the file's `groups` key, when there are none. */
  groups?: WorkflowGroup[];
  /** Left out, like the file's `comments` key, when there are none. */
  comments?: WorkflowComment[];
}

/** A group's size when the file gives none, as graphbook.workflow_codec reads it. */
export const GROUP_SIZE = { width: 300, height: 200 };

export class WorkflowFormatError extends Error {
  override name = 'WorkflowFormatError';
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'a string';
  return typeof value;
}

/** Reads canonical data (already JSON-parsed); `name` prefixes error messages. */
export function parseCanonical(data: unknown, name: string): Workflow {
  if (!isObject(data)) throw new WorkflowFormatError(`${name}: a workflow is a JSON object, not ${kindOf(data)}`);
  if (data.format !== FORMAT) {
    throw new WorkflowFormatError(
      `${name}: not a workflow file; expected "format": "${FORMAT}" (or a Graphbook file with "type": "workflow")`,
    );
  }
  if (data.version !== VERSION) {
    throw new WorkflowFormatError(
      `${name}: workflow format version ${JSON.stringify(data.version)} is not supported; this Graphbook reads version ${VERSION}`,
    );
  }
  const nodes = listOf(data, 'nodes', name).map((raw, i) => parseNode(raw, `${name}: nodes[${i}]`));
  const seen = new Set<string>();
  for (const node of nodes) {
    if (seen.has(node.id)) throw new WorkflowFormatError(`${name}: two nodes have id '${node.id}'; ids must be unique`);
    seen.add(node.id);
  }
  const edges = listOf(data, 'edges', name).map((raw, i) => parseEdge(raw, `${name}: edges[${i}]`));
  const groups = parseGroups(listOf(data, 'groups', name), seen, name);
  const comments = listOf(data, 'comments', name).map((raw, i) => parseComment(raw, `${name}: comments[${i}]`));
  for (const comment of comments) {
    if (seen.has(comment.id))
      throw new WorkflowFormatError(`${name}: comment id '${comment.id}' is taken; ids must be unique in a file`);
    seen.add(comment.id);
  }
  const inputs = parseInputs(data.inputs ?? {}, name);
  const outputs = parseOutputs(data.outputs ?? {}, name);
  const workflow: Workflow = { doc: typeof data.doc === 'string' ? data.doc : '', nodes, edges };
  return {
    ...workflow,
    ...(Object.keys(inputs).length ? { inputs } : {}),
    ...(Object.keys(outputs).length ? { outputs } : {}),
    ...(groups.length ? { groups } : {}),
    ...(comments.length ? { comments } : {}),
  };
}

function parseInputs(raw: unknown, name: string): Record<string, WorkflowInput> {
  if (!isObject(raw))
    throw new WorkflowFormatError(
      `${name}: 'inputs' must be an object {"NAME": {"node": ID, "param": NAME}}, not ${kindOf(raw)}`,
    );
  const inputs: Record<string, WorkflowInput> = {};
  for (const [key, entry] of Object.entries(raw)) {
    const where = `${name}: inputs['${key}']`;
    if (!INPUT_NAME.test(key))
      throw new WorkflowFormatError(`${name}: input name '${key}' is not a word: use letters, digits, '_' and '-'`);
    if (!isObject(entry)) throw new WorkflowFormatError(`${where} must be an object, not ${kindOf(entry)}`);
    const { node, param, description } = entry;
    if (typeof node !== 'string' || !node || typeof param !== 'string' || !param) {
      throw new WorkflowFormatError(`${where} needs a node id and a parameter name: {"node": ID, "param": NAME}`);
    }
    if (description !== undefined && description !== null && typeof description !== 'string')
      throw new WorkflowFormatError(`${where}: 'description' must be a string`);
    inputs[key] = { node, param, ...(description ? { description } : {}), ...parseNarrowing(entry, where) };
  }
  return inputs;
}

/** An input's bounds, choices, picker and accepted suffixes, checked as the server reads them. */
function parseNarrowing(entry: Record<string, unknown>, where: string): InputNarrowing {
  const narrowing: InputNarrowing = {};
  for (const bound of ['minimum', 'maximum'] as const) {
    const value = entry[bound];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number') throw new WorkflowFormatError(`${where}: '${bound}' must be a number`);
    narrowing[bound] = value;
  }
  const { choices, picker, accept } = entry;
  if (Array.isArray(choices) && choices.length) narrowing.choices = choices as Json[];
  if (typeof picker === 'string' && picker) {
    if (!(PICKERS as readonly string[]).includes(picker))
      throw new WorkflowFormatError(`${where}: 'picker' is one of ${PICKERS.join(', ')}`);
    narrowing.picker = picker as Picker;
  }
  if (Array.isArray(accept) && accept.length) narrowing.accept = accept.map(String);
  return narrowing;
}

function parseOutputs(raw: unknown, name: string): Record<string, WorkflowOutput> {
  if (!isObject(raw)) throw new WorkflowFormatError(`${name}: 'outputs' must be an object, not ${kindOf(raw)}`);
  const outputs: Record<string, WorkflowOutput> = {};
  for (const [key, entry] of Object.entries(raw)) {
    const where = `${name}: outputs['${key}']`;
    if (!INPUT_NAME.test(key)) throw new WorkflowFormatError(`${name}: output name '${key}' is not a word`);
    if (!isObject(entry)) throw new WorkflowFormatError(`${where} must be an object, not ${kindOf(entry)}`);
    const { node, output = 'out', kind, description } = entry;
    if (typeof node !== 'string' || !node || typeof output !== 'string' || !output)
      throw new WorkflowFormatError(`${where} needs a node id and one of its outputs`);
    if (!(OUTPUT_KINDS as readonly unknown[]).includes(kind))
      throw new WorkflowFormatError(`${where}: 'kind' is one of ${OUTPUT_KINDS.join(', ')}`);
    const shown = { node, output, kind: kind as OutputKind };
    outputs[key] = typeof description === 'string' && description ? { ...shown, description } : shown;
  }
  return outputs;
}

function parseComment(raw: unknown, where: string): WorkflowComment {
  if (!isObject(raw)) throw new WorkflowFormatError(`${where} must be an object, not ${kindOf(raw)}`);
  const { id, text = '', width = 240 } = raw;
  if (typeof id !== 'string' || id === '') throw new WorkflowFormatError(`${where} needs a non-empty string 'id'`);
  if (typeof text !== 'string') throw new WorkflowFormatError(`${where} (id '${id}'): 'text' must be a string`);
  if (typeof width !== 'number' || !(width > 0))
    throw new WorkflowFormatError(`${where} (id '${id}'): 'width' must be a positive number`);
  return { id, text, position: parsePosition(raw.position), width };
}

/** Groups as graphbook.workflow_codec reads them: ids naming no node are left out of the group. */
function parseGroups(raws: unknown[], nodeIds: ReadonlySet<string>, name: string): WorkflowGroup[] {
  const groups: WorkflowGroup[] = [];
  const ownerOf = new Map<string, string>();
  raws.forEach((raw, i) => {
    const group = parseGroup(raw, `${name}: groups[${i}]`);
    if (groups.some((g) => g.id === group.id))
      throw new WorkflowFormatError(`${name}: two groups have id '${group.id}'; ids must be unique`);
    if (nodeIds.has(group.id))
      throw new WorkflowFormatError(`${name}: group '${group.id}' has the id of a node; give the group another id`);
    const members = [...new Set(group.nodes)].filter((id) => nodeIds.has(id));
    for (const id of members) {
      const owner = ownerOf.get(id);
      if (owner !== undefined) {
        throw new WorkflowFormatError(
          `${name}: node '${id}' is in groups '${owner}' and '${group.id}'; a node can be in one group only, so remove it from one of them`,
        );
      }
      ownerOf.set(id, group.id);
    }
    groups.push({ ...group, nodes: members });
  });
  return groups;
}

function parseGroup(raw: unknown, where: string): WorkflowGroup {
  if (!isObject(raw)) throw new WorkflowFormatError(`${where} must be an object, not ${kindOf(raw)}`);
  const { id, nodes } = raw;
  const label = raw.label ?? '';
  if (typeof id !== 'string' || id === '') throw new WorkflowFormatError(`${where} needs a non-empty string 'id'`);
  const at = `${where} (id '${id}')`;
  if (typeof label !== 'string') throw new WorkflowFormatError(`${at}: 'label' must be a string`);
  if (!Array.isArray(nodes) || !nodes.every((n) => typeof n === 'string' && n !== '')) {
    throw new WorkflowFormatError(`${at}: 'nodes' must be a list of node ids (strings)`);
  }
  const [x, y] = pair(raw, 'position', ['x', 'y'], at) ?? [0, 0];
  const [width, height] = pair(raw, 'size', ['width', 'height'], at) ?? [GROUP_SIZE.width, GROUP_SIZE.height];
  if (width <= 0 || height <= 0) throw new WorkflowFormatError(`${at}: 'size' must have a positive width and height`);
  return { id, label, position: { x, y }, size: { width, height }, nodes: nodes as string[] };
}

/** `raw[key]` as two finite numbers named `names`; undefined when the key is absent. */
function pair(
  raw: Record<string, unknown>,
  key: string,
  names: [string, string],
  where: string,
): [number, number] | undefined {
  const value = raw[key];
  if (value === undefined || value === null) return undefined;
  const numbers = isObject(value) ? names.map((n) => value[n]) : [];
  if (numbers.length !== 2 || !numbers.every((v) => typeof v === 'number' && Number.isFinite(v))) {
    throw new WorkflowFormatError(`${where}: '${key}' must be {${names.map((n) => `"${n}": number`).join(', ')}}`);
  }
  return numbers as [number, number];
}

function listOf(data: Record<string, unknown>, key: string, name: string): unknown[] {
  const value = data[key] ?? [];
  if (!Array.isArray(value)) throw new WorkflowFormatError(`${name}: '${key}' must be a list, not ${kindOf(value)}`);
  return value;
}

function parseNode(raw: unknown, where: string): WorkflowNode {
  if (!isObject(raw)) throw new WorkflowFormatError(`${where} must be an object, not ${kindOf(raw)}`);
  const { id, type } = raw;
  if (typeof id !== 'string' || id === '') throw new WorkflowFormatError(`${where} needs a non-empty string 'id'`);
  if (typeof type !== 'string' || type === '') {
    throw new WorkflowFormatError(`${where} (id '${id}') needs a string 'type' (a node name)`);
  }
  const params = raw.params ?? {};
  if (!isObject(params)) throw new WorkflowFormatError(`${where} (id '${id}'): 'params' must be an object`);
  const label = raw.label ?? '';
  if (typeof label !== 'string') throw new WorkflowFormatError(`${where} (id '${id}'): 'label' must be a string`);
  const module = raw.module ?? '';
  if (typeof module !== 'string') throw new WorkflowFormatError(`${where} (id '${id}'): 'module' must be a string`);
  const looks = parseLooks(raw, `${where} (id '${id}')`);
  const node: WorkflowNode = {
    id,
    type,
    label,
    params: params as Record<string, Json>,
    position: parsePosition(raw.position),
  };
  const component = raw.component;
  if (component !== undefined && !isObject(component))
    throw new WorkflowFormatError(`${where} (id '${id}'): 'component' must be an object`);
  return {
    ...node,
    ...(component ? { component: component as Record<string, Json> } : {}),
    ...(module ? { module } : {}),
    ...looks,
  };
}

/** How a node shows and whether it runs (width, folded, mode, colour): only what differs from the default. */
function parseLooks(
  raw: Record<string, unknown>,
  at: string,
): Pick<WorkflowNode, 'width' | 'collapsed' | 'mode' | 'color'> {
  const { width, collapsed = false } = raw;
  if (width !== undefined && width !== null && !(typeof width === 'number' && width > 0)) {
    throw new WorkflowFormatError(`${at}: 'width' must be a positive number`);
  }
  if (typeof collapsed !== 'boolean') throw new WorkflowFormatError(`${at}: 'collapsed' must be true or false`);
  const mode = raw.mode ?? 'active';
  if (mode !== 'active' && mode !== 'bypass' && mode !== 'mute') {
    throw new WorkflowFormatError(
      `${at}: 'mode' must be "bypass" or "mute" (or left out to run the node), not ${JSON.stringify(mode)}`,
    );
  }
  const color = raw.color ?? '';
  if (color && !(NODE_COLORS as readonly unknown[]).includes(color)) {
    throw new WorkflowFormatError(
      `${at}: 'color' must be one of ${NODE_COLORS.join(', ')} (or left out), not ${JSON.stringify(color)}`,
    );
  }
  return {
    ...(typeof width === 'number' ? { width } : {}),
    ...(collapsed ? { collapsed } : {}),
    ...(mode !== 'active' ? { mode } : {}),
    ...(color ? { color: color as NodeColor } : {}),
  };
}

export function parsePosition(raw: unknown): { x: number; y: number } {
  if (isObject(raw) && typeof raw.x === 'number' && typeof raw.y === 'number') return { x: raw.x, y: raw.y };
  if (isObject(raw)) {
    const x = typeof raw.x === 'number' ? raw.x : 0;
    const y = typeof raw.y === 'number' ? raw.y : 0;
    return { x, y };
  }
  return { x: 0, y: 0 };
}

function parseEdge(raw: unknown, where: string): WorkflowEdge {
  if (!isObject(raw)) throw new WorkflowFormatError(`${where} must be an object, not ${kindOf(raw)}`);
  const missing = ['source', 'output', 'target'].filter((k) => typeof raw[k] !== 'string' || raw[k] === '');
  if (missing.length) throw new WorkflowFormatError(`${where} needs string field(s): ${missing.join(', ')}`);
  const input = raw.input === undefined ? DATA_INPUT : String(raw.input);
  const edge = { source: String(raw.source), output: String(raw.output), target: String(raw.target), input };
  const points = parsePoints(raw.points ?? [], where);
  return points.length ? { ...edge, points } : edge;
}

function parsePoints(raw: unknown, where: string): Point[] {
  if (!Array.isArray(raw)) throw new WorkflowFormatError(`${where}: 'points' must be a list of {"x", "y"} points`);
  return raw.map((point, i) => {
    const ok = isObject(point) && [point.x, point.y].every((v) => typeof v === 'number' && Number.isFinite(v));
    if (!ok) throw new WorkflowFormatError(`${where}: points[${i}] must be {"x": number, "y": number}`);
    return { x: point.x as number, y: point.y as number };
  });
}

// -- writing ---------------------------------------------------------------------------------

/** Python's `natural()` sort: `n2` before `n10`, ties broken by the text. */
export function naturalCompare(a: string, b: string): number {
  const pa = a.split(/(\d+)/);
  const pb = b.split(/(\d+)/);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = pa[i] ?? '';
    const y = pb[i] ?? '';
    const cmp = i % 2 === 1 ? Number(x) - Number(y) : plainCompare(x, y);
    if (cmp !== 0) return Math.sign(cmp);
  }
  if (pa.length !== pb.length) return pa.length < pb.length ? -1 : 1;
  return plainCompare(a, b);
}

function plainCompare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function edgeCompare(a: WorkflowEdge, b: WorkflowEdge): number {
  return (
    naturalCompare(a.source, b.source) ||
    plainCompare(a.output, b.output) ||
    naturalCompare(a.target, b.target) ||
    plainCompare(a.input, b.input)
  );
}

/** Python's round(value, 1): the exact decimal value rounded, and exact ties to even. */
export function coordinate(value: number): number {
  const quarters = value * 4;
  if (Number.isInteger(quarters) && quarters % 2 !== 0) {
    const tenths = Math.floor(value * 10);
    return (tenths % 2 === 0 ? tenths : tenths + 1) / 10;
  }
  return Number(value.toFixed(1)) + 0;
}

/** Nodes and groups sorted by id, edges sorted and without duplicates: the canonical order. */
export function canonicalOrder(workflow: Workflow): Workflow {
  const nodes = [...workflow.nodes].sort((a, b) => naturalCompare(a.id, b.id));
  const unique = new Map<string, WorkflowEdge>();
  for (const edge of workflow.edges) if (!unique.has(edgeKey(edge))) unique.set(edgeKey(edge), edge); // the first, as Python's set()
  const edges = [...unique.values()].sort(edgeCompare);
  const ids = new Set(nodes.map((n) => n.id));
  const groups = [...(workflow.groups ?? [])]
    .sort((a, b) => naturalCompare(a.id, b.id))
    .map((g) => ({ ...g, nodes: [...new Set(g.nodes)].filter((id) => ids.has(id)).sort(naturalCompare) }));
  const comments = [...(workflow.comments ?? [])].sort((a, b) => naturalCompare(a.id, b.id));
  const names = Object.keys(workflow.inputs ?? {}).sort(plainCompare);
  const inputs = Object.fromEntries(names.map((k) => [k, (workflow.inputs ?? {})[k] as WorkflowInput]));
  const shown = Object.keys(workflow.outputs ?? {}).sort(plainCompare);
  const outputs = Object.fromEntries(shown.map((k) => [k, (workflow.outputs ?? {})[k] as WorkflowOutput]));
  return {
    doc: workflow.doc,
    nodes,
    edges,
    ...(names.length ? { inputs } : {}),
    ...(shown.length ? { outputs } : {}),
    ...(groups.length ? { groups } : {}),
    ...(comments.length ? { comments } : {}),
  };
}

/** An input as the file holds it (graphbook.workflow_codec's `_input_json`), keys in its order. */
function inputJson(given: WorkflowInput): Record<string, Json> {
  const json: Record<string, Json> = { node: given.node, param: given.param };
  if (given.description) json.description = given.description;
  if (given.minimum !== undefined) json.minimum = given.minimum;
  if (given.maximum !== undefined) json.maximum = given.maximum;
  if (given.choices?.length) json.choices = given.choices;
  if (given.picker) json.picker = given.picker;
  if (given.accept?.length) json.accept = given.accept;
  return json;
}

function outputJson(shown: WorkflowOutput): Record<string, Json> {
  const json: Record<string, Json> = { node: shown.node, output: shown.output, kind: shown.kind };
  return shown.description ? { ...json, description: shown.description } : json;
}

export function edgeKey(edge: WorkflowEdge): string {
  return JSON.stringify([edge.source, edge.output, edge.target, edge.input]);
}

/** Python's json.dumps(value) (separators ", " and ": ", no indent). */
export function pyDumps(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pyDumps).join(', ')}]`;
  if (isObject(value)) {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}: ${pyDumps(v)}`)
      .join(', ')}}`;
  }
  return jsonScalar(value);
}

function jsonScalar(value: unknown): string {
  if (typeof value === 'number' && !Number.isFinite(value)) {
    throw new WorkflowFormatError(`${String(value)} is not JSON and cannot be saved in a workflow file`);
  }
  return JSON.stringify(value ?? null);
}

/** Python's json.dumps(value, indent=2), then indented by `pad` after each newline. */
function pyIndented(value: unknown, pad: string): string {
  const inner = (v: unknown, depth: string): string => {
    const next = depth + '  ';
    if (Array.isArray(v)) {
      if (v.length === 0) return '[]';
      return `[\n${v.map((x) => next + inner(x, next)).join(',\n')}\n${depth}]`;
    }
    if (isObject(v)) {
      const entries = Object.entries(v);
      if (entries.length === 0) return '{}';
      return `{\n${entries.map(([k, x]) => `${next}${JSON.stringify(k)}: ${inner(x, next)}`).join(',\n')}\n${depth}}`;
    }
    return jsonScalar(v);
  };
  return inner(value, pad);
}

function sortedParams(params: Record<string, Json>): Record<string, Json> {
  const keys = Object.keys(params).filter((k) => params[k] !== undefined);
  keys.sort(plainCompare);
  return Object.fromEntries(keys.map((k) => [k, params[k] as Json]));
}

function nodeText(node: WorkflowNode): string {
  const parts = [`      "id": ${JSON.stringify(node.id)}`, `      "type": ${JSON.stringify(node.type)}`];
  if (node.label) parts.push(`      "label": ${JSON.stringify(node.label)}`);
  if (node.module) parts.push(`      "module": ${JSON.stringify(node.module)}`);
  const params = sortedParams(node.params);
  parts.push(`      "params": ${Object.keys(params).length ? pyIndented(params, '      ') : '{}'}`);
  const position = { x: coordinate(node.position.x), y: coordinate(node.position.y) };
  parts.push(`      "position": ${pyDumps(position)}`);
  if (node.width) parts.push(`      "width": ${pyDumps(coordinate(node.width))}`);
  if (node.collapsed) parts.push('      "collapsed": true');
  if (node.mode && node.mode !== 'active') parts.push(`      "mode": ${JSON.stringify(node.mode)}`);
  if (node.color) parts.push(`      "color": ${JSON.stringify(node.color)}`);
  if (node.component) parts.push(`      "component": ${pyIndented(node.component, '      ')}`);
  return `    {\n${parts.join(',\n')}\n    }`;
}

function groupText(group: WorkflowGroup): string {
  const parts = [
    `      "id": ${JSON.stringify(group.id)}`,
    `      "label": ${JSON.stringify(group.label)}`,
    `      "position": ${pyDumps({ x: coordinate(group.position.x), y: coordinate(group.position.y) })}`,
    `      "size": ${pyDumps({ width: coordinate(group.size.width), height: coordinate(group.size.height) })}`,
    `      "nodes": ${pyDumps(group.nodes)}`,
  ];
  return `    {\n${parts.join(',\n')}\n    }`;
}

function commentText(comment: WorkflowComment): string {
  const parts = [
    `      "id": ${JSON.stringify(comment.id)}`,
    `      "text": ${JSON.stringify(comment.text)}`,
    `      "position": ${pyDumps({ x: coordinate(comment.position.x), y: coordinate(comment.position.y) })}`,
    `      "width": ${pyDumps(coordinate(comment.width))}`,
  ];
  return `    {\n${parts.join(',\n')}\n    }`;
}

/** A node as the file holds it (graphbook.workflow_codec's `_node_json`), keys in its order. */
export function nodeJson(node: WorkflowNode): Record<string, Json> {
  const json: Record<string, Json> = { id: node.id, type: node.type };
  if (node.label) json.label = node.label;
  if (node.module) json.module = node.module;
  json.params = sortedParams(node.params);
  json.position = { x: coordinate(node.position.x), y: coordinate(node.position.y) };
  if (node.width) json.width = coordinate(node.width);
  if (node.collapsed) json.collapsed = true;
  if (node.mode && node.mode !== 'active') json.mode = node.mode;
  if (node.color) json.color = node.color;
  if (node.component) json.component = node.component;
  return json;
}

export function edgeJson(edge: WorkflowEdge): Record<string, unknown> {
  const json: Record<string, unknown> = {
    source: edge.source,
    output: edge.output,
    target: edge.target,
    input: edge.input,
  };
  if (edge.points?.length) json.points = edge.points.map((p) => ({ x: coordinate(p.x), y: coordinate(p.y) }));
  return json;
}

/** The file text, exactly as `Workflow.dumps()` writes it. */
export function dumps(workflow: Workflow): string {
  const ordered = canonicalOrder(workflow);
  const entries = [`  "format": ${JSON.stringify(FORMAT)}`, `  "version": ${VERSION}`];
  if (ordered.doc) entries.push(`  "doc": ${JSON.stringify(ordered.doc)}`);
  const inputs = Object.entries(ordered.inputs ?? {}).map(
    ([k, v]) => `    ${JSON.stringify(k)}: ${pyDumps(inputJson(v))}`,
  );
  if (inputs.length) entries.push(`  "inputs": {\n${inputs.join(',\n')}\n  }`);
  const outputs = Object.entries(ordered.outputs ?? {}).map(
    ([k, v]) => `    ${JSON.stringify(k)}: ${pyDumps(outputJson(v))}`,
  );
  if (outputs.length) entries.push(`  "outputs": {\n${outputs.join(',\n')}\n  }`);
  const nodes = ordered.nodes.map(nodeText).join(',\n');
  entries.push(ordered.nodes.length ? `  "nodes": [\n${nodes}\n  ]` : '  "nodes": []');
  const edges = ordered.edges.map((e) => `    ${pyDumps(edgeJson(e))}`);
  entries.push(edges.length ? `  "edges": [\n${edges.join(',\n')}\n  ]` : '  "edges": []');
  if (ordered.groups?.length) entries.push(`  "groups": [\n${ordered.groups.map(groupText).join(',\n')}\n  ]`);
  if (ordered.comments?.length) entries.push(`  "comments": [\n${ordered.comments.map(commentText).join(',\n')}\n  ]`);
  return `{\n${entries.join(',\n')}\n}\n`;
}
