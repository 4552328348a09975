// Checks a workflow against the catalog as graphbook.graph does, so problems show on their
// nodes while editing, before the server is asked to run anything.

import { type Catalog, type NodeInfo, type ParamInfo, accepts } from '../catalog';
import { DATA_INPUT, type Json, type Workflow, type WorkflowEdge, isObject } from './format';
import { componentSpec } from './components';
import { runningPart } from './modes';

export interface Problem {
  node: string;
  message: string;
  fix: string;
}

/** Bypassed and muted nodes are taken out first, as graph.py does: they are not checked. */
export function validate(document: Workflow, catalog: Catalog): Problem[] {
  const workflow = runningPart(document);
  const problems: Problem[] = [];
  const ids = new Set(workflow.nodes.map((n) => n.id));
  const specs = new Map<string, NodeInfo>();
  for (const node of workflow.nodes) {
    const spec = node.component ? componentSpec(node.component, catalog) : catalog.nodes[node.type];
    if (spec) specs.set(node.id, spec);
    else if (node.component)
      continue; // a library component the catalog lacks: the server names the problem
    else
      problems.push({ node: node.id, message: `unknown node type '${node.type}'`, fix: suggest(node.type, catalog) });
  }
  const wired = new Map<string, Set<string>>();
  for (const edge of workflow.edges) {
    const problem = edgeProblem(edge, ids, specs);
    if (problem) problems.push(problem);
    else if (edge.input !== DATA_INPUT) {
      const set = wired.get(edge.target) ?? new Set<string>();
      if (set.has(edge.input)) {
        problems.push({
          node: edge.target,
          message: `parameter '${edge.input}' is wired twice`,
          fix: 'remove one of the two resource edges',
        });
      }
      set.add(edge.input);
      wired.set(edge.target, set);
      const mismatch = valueTypeProblem(edge, specs, catalog.fits);
      if (mismatch) problems.push(mismatch);
    }
  }
  for (const node of workflow.nodes) {
    const spec = specs.get(node.id);
    if (spec) problems.push(...paramProblems(node.id, node.params, spec, wired.get(node.id) ?? new Set()));
  }
  const cycle = findCycle(workflow);
  if (cycle) {
    problems.push({
      node: cycle[0] ?? '',
      message: `is part of a cycle: ${cycle.join(' -> ')}`,
      fix: 'remove one of these edges so that data flows one way',
    });
  }
  return problems;
}

function suggest(type: string, catalog: Catalog): string {
  const lower = type.toLowerCase();
  const close = Object.keys(catalog.nodes).find(
    (n) => n.toLowerCase() === lower || distance(n.toLowerCase(), lower) <= 2,
  );
  return close ? `did you mean '${close}'?` : 'load the file that defines it with --nodes DIR';
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j] ?? 0;
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((row[j - 1] ?? 0) + 1, current + 1, previous + cost);
      previous = current;
    }
  }
  return row[b.length] ?? 0;
}

function edgeProblem(edge: WorkflowEdge, ids: Set<string>, specs: Map<string, NodeInfo>): Problem | null {
  const missing = missingEndProblem(edge, ids);
  if (missing) return missing;
  const source = specs.get(edge.source);
  const target = specs.get(edge.target);
  if (!source || !target) return null;
  if (!source.outputs.includes(edge.output)) {
    return {
      node: edge.source,
      message: `has no output '${edge.output}' (edge to '${edge.target}')`,
      fix: `its outputs are: ${source.outputs.join(', ') || 'none'}`,
    };
  }
  return edge.input === DATA_INPUT ? dataInputProblem(edge, source, target) : paramInputProblem(edge, source, target);
}

/** An edge from or to a node that is not in the workflow, named on the node at its other end. */
function missingEndProblem(edge: WorkflowEdge, ids: Set<string>): Problem | null {
  for (const end of [edge.source, edge.target]) {
    if (!ids.has(end)) {
      const other = end === edge.source ? edge.target : edge.source;
      return {
        node: other,
        message: `an edge connects it to node '${end}', which does not exist`,
        fix: 'delete the edge or add the node',
      };
    }
  }
  return null;
}

/** An edge into a node's data input: only a step's output, and only into a node that takes data. */
function dataInputProblem(edge: WorkflowEdge, source: NodeInfo, target: NodeInfo): Problem | null {
  if (source.kind === 'resource') {
    return {
      node: edge.target,
      message: `resource '${edge.source}' is wired to its data input 'in'`,
      fix: "wire resources to a parameter, and step outputs to 'in'",
    };
  }
  if (!target.inputs.length) {
    return {
      node: edge.target,
      message: `takes no input, but '${edge.source}' is wired into it`,
      fix: 'a source or resource has no data input; delete the edge',
    };
  }
  return null;
}

/** An edge into a parameter: one the node has, fed by a resource. */
function paramInputProblem(edge: WorkflowEdge, source: NodeInfo, target: NodeInfo): Problem | null {
  if (!target.params.some((p) => p.name === edge.input)) {
    return {
      node: edge.target,
      message: `has no input or parameter '${edge.input}' (edge from '${edge.source}')`,
      fix: `its parameters are: ${target.params.map((p) => p.name).join(', ') || 'none'}`,
    };
  }
  if (source.kind !== 'resource') {
    return {
      node: edge.target,
      message: `parameter '${edge.input}' is wired from the step output ${edge.source}.${edge.output}`,
      fix: "only resource nodes can feed parameters; wire the step into 'in' instead",
    };
  }
  return null;
}

/** A resource wired into a parameter that cannot take what it gives (a model into a path). */
function valueTypeProblem(edge: WorkflowEdge, specs: Map<string, NodeInfo>, fits: Catalog['fits']): Problem | null {
  const source = specs.get(edge.source);
  const param = specs.get(edge.target)?.params.find((p) => p.name === edge.input);
  if (!source || !param || accepts(fits, param.type, source.gives)) return null;
  return { node: edge.target, message: wrongTypeMessage(param, edge.source, source), fix: wrongTypeFix(param) };
}

/** graph.py's words for a resource wired into a parameter that cannot take its value. */
export function wrongTypeMessage(param: ParamInfo, sourceId: string, source: NodeInfo): string {
  return `parameter '${param.name}' expects ${expectedText(param.type)}, but resource '${sourceId}' (${source.name}) gives ${givesText(source.gives)}`;
}

export function wrongTypeFix(param: ParamInfo): string {
  return `delete the wire and give '${param.name}' a value, or wire a resource that gives ${expectedText(param.type)}`;
}

function givesText(gives: string): string {
  return gives === 'object' ? 'a Python object (such as a model)' : expectedText(gives);
}

function paramProblems(id: string, params: Record<string, Json>, spec: NodeInfo, wired: Set<string>): Problem[] {
  const problems: Problem[] = [];
  for (const name of Object.keys(params)) {
    if (!spec.params.some((p) => p.name === name)) {
      const known = spec.params.map((p) => p.name).join(', ') || 'none';
      problems.push({
        node: id,
        message: `${spec.name} has no parameter '${name}'`,
        fix: `its parameters are: ${known}`,
      });
    }
  }
  for (const param of spec.params) {
    if (wired.has(param.name)) continue;
    const raw = params[param.name];
    const value = raw === undefined || raw === null ? (param.default as Json) : raw;
    if (value === null || value === undefined) {
      if (param.required) problems.push(missing(id, param));
      continue;
    }
    const wrong = typeProblem(param, value);
    if (wrong) problems.push({ node: id, message: wrong, fix: `give '${param.name}' ${expectedText(param.type)}` });
  }
  return problems;
}

function missing(id: string, param: ParamInfo): Problem {
  const fix =
    param.type === 'resource'
      ? `wire a resource node to '${param.name}'`
      : `give '${param.name}' ${expectedText(param.type)}, or wire a resource node to it`;
  return { node: id, message: `required parameter '${param.name}' has no value`, fix };
}

export function expectedText(type: string): string {
  if (type.startsWith('list[')) return `a list of ${type.slice(5, -1)} values`;
  const words: Record<string, string> = {
    string: 'a string',
    number: 'a number',
    int: 'a whole number',
    float: 'a number',
    boolean: 'true or false',
    function: 'Python source of a function (a `def` or a `lambda`)',
    dict: 'a dict',
    list: 'a list',
    resource: 'a resource node wired to it',
  };
  return words[type] ?? `a ${type} value`;
}

const isNumeric = (v: Json): boolean =>
  (typeof v === 'number' && Number.isFinite(v)) ||
  (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)));

/** A message when `value` does not have the parameter's type, as Python's `coerce` decides. */
export function typeProblem(param: ParamInfo, value: Json): string | null {
  const got = `got ${typeName(value)} ${pyRepr(value).slice(0, 80)}`;
  const bad = (what: string): string => `parameter '${param.name}' expects ${what}, ${got}`;
  switch (param.type) {
    case 'string':
      return typeof value === 'string' || typeof value === 'number' ? null : bad('a string');
    case 'number':
    case 'float':
      return isNumeric(value) && typeof value !== 'boolean' ? null : bad('a number');
    case 'int':
      return isNumeric(value) && Number.isInteger(Number(value)) ? null : bad('a whole number');
    case 'boolean':
      return typeof value === 'boolean' || value === 'true' || value === 'false' ? null : bad('true or false');
    case 'function':
      return typeof value === 'string' ? null : bad('Python source of a function');
    case 'dict':
      return isObject(value) || Array.isArray(value) ? null : bad('a dict');
    default:
      if (param.type.startsWith('list')) return Array.isArray(value) ? null : bad('a list');
      return null;
  }
}

/** Python's repr() of a JSON value, so messages read as the server writes them. */
export function pyRepr(value: Json): string {
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') {
    const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
    const body = value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\t/g, '\\t');
    return quote + (quote === "'" ? body.replace(/'/g, "\\'") : body) + quote;
  }
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  return `{${Object.entries(value)
    .map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`)
    .join(', ')}}`;
}

function typeName(value: Json): string {
  if (value === null) return 'NoneType';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'object') return 'dict';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  return 'str';
}

/** One cycle as `a -> b -> a`, or null: the nodes Kahn's algorithm cannot order, walked back
 * from the first by name along its parents, as graph.py `_topological` and `_cycle` do. */
export function findCycle(workflow: Workflow): string[] | null {
  const stuck = unordered(workflow);
  if (!stuck.size) return null;
  const parents = new Map<string, string[]>();
  for (const e of workflow.edges) {
    if (stuck.has(e.source) && stuck.has(e.target)) parents.set(e.target, [...(parents.get(e.target) ?? []), e.source]);
  }
  for (const list of parents.values()) list.sort(byName);
  const path: string[] = [];
  let current = [...stuck].sort(byName)[0] ?? '';
  while (!path.includes(current)) {
    path.push(current);
    current = parents.get(current)?.[0] ?? current;
  }
  const cycle = path.slice(path.indexOf(current));
  return [...cycle.reverse(), cycle[0] ?? current];
}

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The nodes left once every node with no unordered parent is taken, again and again. */
function unordered(workflow: Workflow): Set<string> {
  const ids = new Set(workflow.nodes.map((n) => n.id));
  const indegree = new Map([...ids].map((id) => [id, 0]));
  const children = new Map<string, string[]>();
  for (const e of workflow.edges) {
    if (!ids.has(e.source) || !ids.has(e.target)) continue;
    indegree.set(e.target, (indegree.get(e.target) ?? 0) + 1);
    children.set(e.source, [...(children.get(e.source) ?? []), e.target]);
  }
  const ready = [...ids].filter((id) => indegree.get(id) === 0);
  for (let id = ready.shift(); id !== undefined; id = ready.shift()) {
    ids.delete(id);
    for (const child of children.get(id) ?? []) {
      indegree.set(child, (indegree.get(child) ?? 0) - 1);
      if (indegree.get(child) === 0) ready.push(child);
    }
  }
  return ids;
}
