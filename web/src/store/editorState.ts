// The editor store's shape: the open workflow on the canvas and every edit the editor can make.

import type { Connection, EdgeChange, NodeChange, XYPosition } from '@xyflow/react';
import type { StoreApi } from 'zustand';
import type { FlowEdge, FlowNode, LibraryEdit, NodeInput, NodeOutput } from '../workflow/flow';
import type { Catalog } from '../catalog';
import type { Json, NodeColor, NodeMode, Point, Workflow } from '../workflow/format';
import type { ComponentBody } from '../workflow/components';
import type { FileFormat } from '../workflow/load';
import type { Clip } from './clipboard';
import type { Snapshot } from './document';
import type { Frame } from './inside';
import type { History } from './history';

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
  /** Marks a node output as a result the workflow shows (an app's), or unmarks it (null). */
  setOutput(id: string, output: string, shown: NodeOutput | null): void;
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
  /** A component node's inside replaced (saved to the library: a reference to it); any
   * pending library edit on it is settled. */
  setComponent(id: string, component: Record<string, Json>): void;
  /** The library file an edited inline component differs from (null: kept as a copy). */
  setLibraryEdit(id: string, edit: LibraryEdit | null): void;
  /** Stops showing the inline component's parameter `name` on its node (the value set there goes): one undo step. */
  hideParam(id: string, name: string): void;
  /** Expose the inner `node`'s parameter `param` on the inline component `id` (one undo step). */
  exposeParam(id: string, node: string, param: string): void;
  /** Shows the nodes inside component node `id` (`body`: what it holds; a library one's
   * `version`: that of the file read) in place of this level. */
  openComponent(id: string, body: ComponentBody, version?: string): void;
  /** Back out to level `depth` (0: the workflow), the edits inside kept: one undo step there. */
  leaveComponent(depth: number): void;
  commit(): void;
  undo(): void;
  redo(): void;
}

export type SetEditor = StoreApi<EditorState>['setState'];
export type GetEditor = StoreApi<EditorState>['getState'];
