// The editor's store: the open workflow on the canvas, its undo history and what is unsaved.

import {
  type Connection,
  type EdgeChange,
  type NodeChange,
  type XYPosition,
  applyEdgeChanges,
  applyNodeChanges,
} from '@xyflow/react';
import { create } from 'zustand';
import { connectionProblem, replacedEdges } from '../workflow/connections';
import type { FlowEdge, FlowNode, GraphFlowNode, NodeInput } from '../workflow/flow';
import { isGraphNode } from '../workflow/flow';
import type { Catalog } from '../catalog';
import { carryPoints } from '../workflow/reroute';
import {
  type Group,
  absolutePosition,
  canvasGroups,
  canvasToWorkflow,
  toFlowEdge,
  workflowToCanvas,
} from '../workflow/canvas';
import type { Json, NodeColor, NodeMode, Point, Workflow, WorkflowNode } from '../workflow/format';
import {
  COMPONENT,
  type ComponentBody,
  LIBRARY_PREFIX,
  collapse,
  exposeParam,
  hideParam,
  specOf,
  unpack,
} from '../workflow/components';
import { useCatalog } from './catalog';
import { type FileFormat } from '../workflow/load';
import { type Clip, makeClip, pasteClip } from './clipboard';
import { type Snapshot, documentKey, sameDocument, snapshot } from './document';
import { groupNodes, ungroup } from './groups';
import { type Frame, composed, fold } from './inside';
import { type History, canRedo, canUndo, record, redo, startHistory, undo } from './history';
import { freshId } from './ids';

export interface OpenFile {
  path: string;
  format: FileFormat;
  /** sha256 of the file as last read or written, sent back as If-Match. */
  hash: string;
}

export interface EditorState {
  file: OpenFile | null;
  doc: string;
  nodes: FlowNode[];
  edges: FlowEdge[];
  /** The document key when the file was last opened or saved: unsaved when it differs. */
  savedKey: string;
  history: History<Snapshot>;
  /** Bumped by loads, undo and redo so the canvas can refit or refresh. */
  revision: number;
  /** The components opened in place, outermost first; the canvas shows the innermost's nodes. */
  inside: Frame[];

  /** Shows a file, groups included; `keepView` leaves the viewport where it is (a reload of the same file). */
  open(file: OpenFile, workflow: Workflow, keepView?: boolean): void;
  close(): void;
  markSaved(key: string, hash: string, path?: string): void;
  /** The open file as the server wrote it (an agent's edit, another tab's save): shown as one undo step, saved. */
  replaceDocument(workflow: Workflow, hash: string): void;
  onNodesChange(changes: NodeChange<FlowNode>[]): void;
  onEdgesChange(changes: EdgeChange<FlowEdge>[]): void;
  connect(connection: Connection, catalog: Catalog): string | null;
  addNode(type: string, position: XYPosition, params?: Record<string, Json>): string;
  setParam(id: string, name: string, value: Json | undefined): void;
  setLabel(id: string, label: string): void;
  /** Makes a parameter a workflow input (named after it unless `name` is given), renames or
   * describes it, or (`null`) makes it a plain parameter again. */
  setInput(id: string, param: string, input: NodeInput | null): void;
  /** Adds an empty comment (a Markdown note) at `position`; returns its id. */
  addComment(position: XYPosition): string;
  setCommentText(id: string, text: string): void;
  /** Folds a node to its title and ports, or unfolds it. */
  setCollapsed(id: string, collapsed: boolean): void;
  /** Colours a node, or takes its colour away (`null`). */
  setColor(id: string, color: NodeColor | null): void;
  /** Bypasses or mutes the nodes `ids` (`active` runs them again): one undo step. */
  setMode(ids: string[], mode: NodeMode): void;
  /** Bypasses (or mutes) the selected nodes, or turns them back on when all of them are already so. */
  toggleMode(mode: Exclude<NodeMode, 'active'>): void;
  /** A wire's reroute points; `commit` false while one is being dragged (committed when it is let go). */
  setPoints(edgeId: string, points: Point[], commit?: boolean): void;
  setGroupLabel(id: string, label: string): void;
  setDoc(doc: string): void;
  select(ids: string[]): void;
  deleteSelection(): void;
  deleteNode(id: string): void;
  /** Copies of the nodes (and the wires among them) a little below and to the right, selected. */
  duplicate(ids: string[]): void;
  copySelection(): Clip | null;
  paste(clip: Clip, at: XYPosition): void;
  groupSelection(): void;
  ungroupSelection(): void;
  /** The selected nodes collapsed into one component node, selected: one undo step; its id. */
  makeComponent(): string | null;
  /** The component node `id` replaced by the nodes inside it (`body`, read from the library for
   * a library one), selected: one undo step. */
  unpackComponent(id: string, body: ComponentBody): void;
  /** A component node's inside replaced (saved to the library: a reference to it). */
  setComponent(id: string, component: Record<string, Json>): void;
  /** Stops showing the inline component's parameter `name` on its node (the value set there goes): one undo step. */
  hideParam(id: string, name: string): void;
  /** Expose the inner `node`'s parameter `param` on the inline component `id` (one undo step). */
  exposeParam(id: string, node: string, param: string): void;
  /** Shows the nodes inside component node `id` (`body`: what it holds) in place of this level. */
  openComponent(id: string, body: ComponentBody): void;
  /** Back out to level `depth` (0: the workflow), the edits inside kept: one undo step there. */
  leaveComponent(depth: number): void;
  commit(): void;
  undo(): void;
  redo(): void;
}

const EMPTY = snapshot([], [], '');

/** How far each node moved on the canvas from `before` to `after` (a group's members move with it); only those that did. */
function offsets(before: FlowNode[], after: FlowNode[]): Map<string, Point> {
  const was = new Map(before.map((n) => [n.id, n]));
  const now = new Map(after.map((n) => [n.id, n]));
  const moved = new Map<string, Point>();
  for (const node of after) {
    const old = was.get(node.id);
    if (!old) continue;
    const a = absolutePosition(old, was);
    const b = absolutePosition(node, now);
    if (a.x !== b.x || a.y !== b.y) moved.set(node.id, { x: b.x - a.x, y: b.y - a.y });
  }
  return moved;
}
let commitTimer: ReturnType<typeof setTimeout> | undefined;

/** The current version of a library component (the catalog's `components/NAME` entry), recorded on a node made from it. */
function libraryVersion(name: string): string {
  return useCatalog.getState().catalog.nodes[name]?.code_hash ?? '';
}

export const useEditor = create<EditorState>()((set, get) => {
  const commitNow = (): void => {
    clearTimeout(commitTimer);
    const { nodes, edges, doc, history } = get();
    set({ history: record(history, snapshot(nodes, edges, doc), sameDocument) });
  };
  /** Typing in a widget commits once it pauses, so one word is one undo step. */
  const commitSoon = (): void => {
    clearTimeout(commitTimer);
    commitTimer = setTimeout(commitNow, 500);
  };
  const updateGraphNode = (id: string, update: (node: GraphFlowNode) => GraphFlowNode): void => {
    set({ nodes: get().nodes.map((n) => (n.id === id && isGraphNode(n) ? update(n) : n)) });
  };
  /** The canvas redrawn from `workflow` (a structural edit), `selected` picked: one undo step. */
  const showWorkflow = (workflow: Workflow, selected: string[]): void => {
    const picked = new Set(selected);
    const { nodes, edges } = workflowToCanvas(workflow);
    set({ nodes: nodes.map((n) => ({ ...n, selected: picked.has(n.id) })), edges });
    commitNow();
  };
  const restore = (history: History<Snapshot>): void => {
    clearTimeout(commitTimer);
    const { nodes, edges } = history.present;
    set({ history, nodes, edges, revision: get().revision + 1 });
  };

  return {
    file: null,
    doc: '',
    nodes: [],
    edges: [],
    savedKey: EMPTY.key,
    history: startHistory(EMPTY),
    revision: 0,
    inside: [],

    open(file, workflow, keepView = false) {
      clearTimeout(commitTimer);
      const { nodes, edges } = workflowToCanvas(workflow);
      const first = snapshot(nodes, edges, workflow.doc);
      const revision = get().revision + (keepView ? 0 : 1);
      set({
        file,
        doc: workflow.doc,
        nodes,
        edges,
        savedKey: first.key,
        history: startHistory(first),
        revision,
        inside: [],
      });
    },
    close() {
      clearTimeout(commitTimer);
      set({
        file: null,
        doc: '',
        nodes: [],
        edges: [],
        savedKey: EMPTY.key,
        history: startHistory(EMPTY),
        revision: get().revision + 1,
        inside: [],
      });
    },
    markSaved(key, hash, path) {
      const file = get().file;
      if (file) set({ savedKey: key, file: { path: path ?? file.path, hash, format: 'canonical' } });
    },
    replaceDocument(workflow, hash) {
      const file = get().file;
      if (!file) return;
      if (get().inside.length) get().leaveComponent(0); // the server's file replaces the whole document
      commitNow(); // edits still waiting for their commit are a step of their own, before this one
      const { nodes, edges } = workflowToCanvas(workflow);
      const next = snapshot(nodes, edges, workflow.doc);
      const history = record(get().history, next, sameDocument);
      set({
        nodes,
        edges,
        doc: workflow.doc,
        history,
        savedKey: next.key,
        file: { ...file, hash },
        revision: get().revision + 1,
      });
    },
    onNodesChange(changes) {
      const structural = changes.some((c) => c.type === 'remove' || c.type === 'add');
      const resized = changes.some((c) => c.type === 'dimensions' && c.setAttributes && c.resizing === false);
      // A resized graph node keeps its width; its height follows its content.
      const before = get().nodes;
      const nodes = applyNodeChanges(changes, before).map((n) =>
        n.type !== 'group' && n.height !== undefined ? { ...n, height: undefined } : n,
      );
      // Dragged together, two nodes (or a group) take the reroute points of the wires between them along.
      const moved = changes.some((c) => c.type === 'position' && c.position)
        ? offsets(before, nodes)
        : new Map<string, Point>();
      const edges = carryPoints(get().edges, moved);
      set(edges === get().edges ? { nodes } : { nodes, edges });
      if (structural || resized) commitNow();
    },
    onEdgesChange(changes) {
      const structural = changes.some((c) => c.type === 'remove' || c.type === 'add');
      set({ edges: applyEdgeChanges(changes, get().edges) });
      if (structural) commitNow();
    },
    connect(connection, catalog) {
      const { nodes, edges } = get();
      const problem = connectionProblem(connection, nodes, edges, catalog);
      if (problem) return problem;
      const source = nodes.find((n) => n.id === connection.source);
      const spec = source && isGraphNode(source) ? specOf(source.data, catalog) : undefined;
      const edge = toFlowEdge({
        source: connection.source,
        output: connection.sourceHandle ?? spec?.outputs[0] ?? 'out',
        target: connection.target,
        input: connection.targetHandle ?? 'in',
      });
      set({ edges: [...replacedEdges(connection, edges), edge] });
      commitNow();
      return null;
    },
    addNode(type, position, params = {}) {
      const { nodes } = get();
      const library = type.startsWith(LIBRARY_PREFIX) ? type.slice(LIBRARY_PREFIX.length) : null;
      const id = freshId(library ? (library.split('/').pop() ?? type) : type, new Set(nodes.map((n) => n.id)));
      const data = library
        ? { type: COMPONENT, label: '', params, component: { library, version: libraryVersion(type) } }
        : { type, label: '', params };
      const node: GraphFlowNode = { id, type: 'graph', position, data, selected: true };
      set({ nodes: [...nodes.map((n) => ({ ...n, selected: false })), node] });
      commitNow();
      return id;
    },
    setParam(id, name, value) {
      updateGraphNode(id, (n) => {
        const params = { ...n.data.params };
        if (value === undefined) delete params[name];
        else params[name] = value;
        return { ...n, data: { ...n.data, params } };
      });
      commitSoon();
    },
    setLabel(id, label) {
      updateGraphNode(id, (n) => ({ ...n, data: { ...n.data, label } }));
      commitSoon();
    },
    setInput(id, param, input) {
      updateGraphNode(id, (n) => {
        const { inputs: was, ...data } = n.data;
        const inputs = { ...was };
        if (input) inputs[param] = input;
        else delete inputs[param];
        return { ...n, data: Object.keys(inputs).length ? { ...data, inputs } : data };
      });
      commitSoon();
    },
    addComment(position) {
      const { nodes } = get();
      const id = freshId('note', new Set(nodes.map((n) => n.id)));
      const comment: FlowNode = { id, type: 'comment', position, width: 240, data: { text: '' }, selected: true };
      set({ nodes: [...nodes.map((n) => ({ ...n, selected: false })), comment] });
      commitNow();
      return id;
    },
    setCommentText(id, text) {
      set({ nodes: get().nodes.map((n) => (n.id === id && n.type === 'comment' ? { ...n, data: { text } } : n)) });
      commitSoon();
    },
    setCollapsed(id, collapsed) {
      updateGraphNode(id, (n) => {
        const { collapsed: _was, ...data } = n.data;
        return { ...n, data: collapsed ? { ...data, collapsed } : data };
      });
      commitNow();
    },
    setColor(id, color) {
      updateGraphNode(id, (n) => {
        const { color: _was, ...data } = n.data;
        return { ...n, data: color ? { ...data, color } : data };
      });
      commitNow();
    },
    setMode(ids, mode) {
      const wanted = new Set(ids);
      set({
        nodes: get().nodes.map((n) => {
          if (!wanted.has(n.id) || !isGraphNode(n)) return n;
          const { mode: _was, ...data } = n.data;
          return { ...n, data: mode === 'active' ? data : { ...data, mode } };
        }),
      });
      commitNow();
    },
    toggleMode(mode) {
      const picked = get().nodes.filter((n) => n.selected && isGraphNode(n)) as GraphFlowNode[];
      if (!picked.length) return;
      const all = picked.every((n) => n.data.mode === mode);
      get().setMode(
        picked.map((n) => n.id),
        all ? 'active' : mode,
      );
    },
    setPoints(edgeId, points, commit = true) {
      set({
        edges: get().edges.map((e) => {
          if (e.id !== edgeId) return e;
          return { ...e, data: points.length ? { ...e.data, points } : {} };
        }),
      });
      if (commit) commitNow();
    },
    setGroupLabel(id, label) {
      set({ nodes: get().nodes.map((n) => (n.id === id && n.type === 'group' ? { ...n, data: { label } } : n)) });
      commitSoon();
    },
    setDoc(doc) {
      set({ doc });
      commitSoon();
    },
    select(ids) {
      const wanted = new Set(ids);
      set({
        nodes: get().nodes.map((n) => ({ ...n, selected: wanted.has(n.id) })),
        edges: get().edges.map((e) => ({ ...e, selected: false })),
      });
    },
    deleteSelection() {
      const { nodes, edges } = get();
      const groups = new Set(nodes.filter((n) => n.selected && n.type === 'group').map((n) => n.id));
      const gone = new Set(nodes.filter((n) => n.selected && n.type !== 'group').map((n) => n.id));
      if (!groups.size && !gone.size && !edges.some((e) => e.selected)) return;
      const kept = ungroup(nodes, groups).filter((n) => !gone.has(n.id));
      const keptEdges = edges.filter((e) => !e.selected && !gone.has(e.source) && !gone.has(e.target));
      set({ nodes: kept, edges: keptEdges });
      commitNow();
    },
    deleteNode(id) {
      get().select([id]);
      get().deleteSelection();
    },
    duplicate(ids) {
      const wanted = new Set(ids);
      const clip = makeClip(
        get().nodes.map((n) => ({ ...n, selected: wanted.has(n.id) })),
        get().edges,
      );
      if (!clip) return;
      const left = Math.min(...clip.nodes.map((n) => n.position.x));
      const top = Math.min(...clip.nodes.map((n) => n.position.y));
      get().paste(clip, { x: left + 40, y: top + 40 });
    },
    copySelection() {
      return makeClip(get().nodes, get().edges);
    },
    paste(clip, at) {
      const { nodes, edges } = get();
      if (!clip.nodes.length) return;
      const pasted = pasteClip(clip, new Set(nodes.map((n) => n.id)), at);
      const added: FlowNode[] = pasted.nodes.map((n: WorkflowNode) => ({
        id: n.id,
        type: 'graph',
        position: n.position,
        data: {
          type: n.type,
          label: n.label,
          params: n.params,
          ...(n.mode && n.mode !== 'active' ? { mode: n.mode } : {}),
        },
        selected: true,
      }));
      set({
        nodes: [...nodes.map((n) => ({ ...n, selected: false })), ...added],
        edges: [...edges.map((e) => ({ ...e, selected: false })), ...pasted.edges.map(toFlowEdge)],
      });
      commitNow();
    },
    groupSelection() {
      const { nodes } = get();
      const ids = new Set(nodes.filter((n) => n.selected && isGraphNode(n)).map((n) => n.id));
      if (!ids.size) return;
      set({ nodes: groupNodes(nodes, ids) });
      commitNow();
    },
    ungroupSelection() {
      const { nodes } = get();
      const selected = nodes.filter((n) => n.selected);
      const groups = new Set(
        selected.map((n) => (n.type === 'group' ? n.id : n.parentId)).filter((id): id is string => !!id),
      );
      if (!groups.size) return;
      set({ nodes: ungroup(nodes, groups) });
      commitNow();
    },
    makeComponent() {
      const { nodes, edges, doc } = get();
      const ids = new Set(nodes.filter((n) => n.selected && isGraphNode(n)).map((n) => n.id));
      if (!ids.size) return null;
      const id = freshId('component', new Set(nodes.map((n) => n.id)));
      showWorkflow(collapse(canvasToWorkflow({ nodes, edges }, doc), ids, id), [id]);
      return id;
    },
    unpackComponent(id, body) {
      const { nodes, edges, doc } = get();
      const { workflow, ids } = unpack(canvasToWorkflow({ nodes, edges }, doc), id, body);
      showWorkflow(workflow, ids);
    },
    setComponent(id, component) {
      updateGraphNode(id, (n) => ({ ...n, data: { ...n.data, component } }));
      commitNow();
    },
    hideParam(id, name) {
      updateGraphNode(id, (n) => {
        if (!n.data.component) return n;
        const { [name]: _gone, ...params } = n.data.params;
        return { ...n, data: { ...n.data, params, component: hideParam(n.data.component, name) } };
      });
      commitNow();
    },
    exposeParam(id, node, param) {
      updateGraphNode(id, (n) => {
        const exposed = n.data.component && exposeParam(n.data.component, node, param);
        if (!exposed) return n;
        const params = { ...n.data.params };
        if (exposed.value !== undefined) params[exposed.name] = exposed.value;
        return { ...n, data: { ...n.data, params, component: exposed.component } };
      });
      commitNow();
    },
    openComponent(id, body) {
      const node = get().nodes.find((n) => n.id === id);
      if (!node || !isGraphNode(node) || !node.data.component) return;
      commitNow();
      const { nodes, edges, history, inside } = get();
      const frame: Frame = { id, nodes, edges, history, component: node.data.component, body };
      const shown = workflowToCanvas({ doc: '', nodes: body.nodes, edges: body.edges });
      const first = snapshot(shown.nodes, shown.edges, '');
      set({
        inside: [...inside, frame],
        nodes: shown.nodes,
        edges: shown.edges,
        history: startHistory(first),
        revision: get().revision + 1,
      });
    },
    leaveComponent(depth) {
      commitNow();
      let { nodes, edges, history } = get();
      const inside = [...get().inside];
      while (inside.length > Math.max(0, depth)) {
        const frame = inside.pop() as Frame;
        ({ nodes, edges } = fold(frame, nodes, edges));
        history = frame.history;
      }
      history = record(history, snapshot(nodes, edges, get().doc), sameDocument);
      set({ inside, nodes, edges, history, revision: get().revision + 1 });
    },
    commit: commitNow,
    undo() {
      commitNow();
      if (canUndo(get().history)) restore(undo(get().history));
    },
    redo() {
      if (canRedo(get().history)) restore(redo(get().history));
    },
  };
});

/** The open document as a workflow file and its groups (a component opened in place folded in). */
export function currentWorkflow(state: Pick<EditorState, 'nodes' | 'edges' | 'doc'> & { inside?: Frame[] }): {
  workflow: Workflow;
  groups: Group[];
} {
  const canvas = composed(state);
  return { workflow: canvasToWorkflow(canvas, state.doc), groups: canvasGroups(canvas) };
}

export function currentKey(state: Pick<EditorState, 'nodes' | 'edges' | 'doc'> & { inside?: Frame[] }): string {
  const { nodes, edges } = composed(state);
  return documentKey(nodes, edges, state.doc);
}
