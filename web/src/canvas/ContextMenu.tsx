// The right-click menu of the canvas, a node, a wire or a group: what can be done to it there.

import { useEffect } from 'react';
import { useReactFlow } from '@xyflow/react';
import { askLibraryName, keepCopy, makeComponent, unpackComponent, updateLibrary } from '../actions/components';
import { clear, run } from '../actions/run';
import { useCatalog } from '../store/catalog';
import { useEditor } from '../store/editor';
import { useGallery } from '../store/gallery';
import { isOffline, useRun } from '../store/run';
import { isActive } from '../store/runState';
import { type ContextMenu as Menu, useUi } from '../store/ui';
import { hiddenParams, libraryOf, specOf } from '../workflow/components';
import { NODE_COLORS } from '../workflow/format';
import { addReroutePoint } from './rerouteActions';
import { type LibraryEdit, isGraphNode } from '../workflow/flow';

interface Item {
  label: string;
  keys?: string;
  disabled?: boolean;
  danger?: boolean;
  act(): void;
}

type Flow = ReturnType<typeof useReactFlow>;
type Editor = ReturnType<typeof useEditor.getState>;
type Spec = ReturnType<typeof specOf>;
type Component = NonNullable<Extract<Editor['nodes'][number], { type: 'graph' }>['data']['component']>;

function paneItems(menu: Menu, flow: Flow, editor: Editor): Item[] {
  const ui = useUi.getState();
  return [
    { label: 'Add a node…', keys: 'Double-click', act: () => ui.openSearch({ x: menu.x, y: menu.y }) },
    { label: 'Add a comment', act: () => editor.addComment(flow.screenToFlowPosition({ x: menu.x, y: menu.y })) },
    { label: 'Select all', keys: 'Ctrl+A', act: () => editor.select(editor.nodes.map((n) => n.id)) },
    { label: 'Fit the view', keys: 'F', act: () => void flow.fitView({ padding: 0.2, duration: 200 }) },
  ];
}

function edgeItems(menu: Menu, id: string, flow: Flow, editor: Editor): Item[] {
  const bent = !!editor.edges.find((e) => e.id === id)?.data?.points?.length;
  return [
    {
      label: 'Add a reroute point here',
      keys: 'Double-click',
      act: () => addReroutePoint(flow, id, flow.screenToFlowPosition({ x: menu.x, y: menu.y })),
    },
    ...(bent ? [{ label: 'Remove its reroute points', act: () => editor.setPoints(id, []) }] : []),
    {
      label: 'Delete the wire',
      keys: 'Delete',
      danger: true,
      act: () => editor.onEdgesChange([{ type: 'remove', id }]),
    },
  ];
}

function groupItems(id: string, editor: Editor): Item[] {
  return [
    { label: 'Ungroup', keys: 'Ctrl+Shift+G', act: () => (editor.select([id]), editor.ungroupSelection()) },
    { label: 'Delete the group', danger: true, act: () => (editor.select([id]), editor.deleteSelection()) },
  ];
}

interface RunLock {
  offline: boolean;
  running: boolean;
}

function runItems(id: string, spec: Spec, off: boolean, lock: RunLock): Item[] {
  return [
    ...(spec?.kind !== 'resource' && !off
      ? [{ label: 'Run up to here', disabled: lock.offline, act: () => void run('until', id) }]
      : []),
    ...(spec?.kind === 'source' && !off
      ? [{ label: 'Run this source again', disabled: lock.offline || lock.running, act: () => void run('trigger', id) }]
      : []),
  ];
}

/** Make a component of the node (with the others picked), and, on a component node, its own actions. */
/** An edited library component's choices: update the library file, or keep the copy here. */
function libraryEditItems(id: string, edit: LibraryEdit | undefined): Item[] {
  if (!edit) return [];
  const file = `components/${edit.library}.json`;
  return [
    edit.refused
      ? { label: `Overwrite ${file}`, danger: true, act: () => void updateLibrary(id, true) }
      : { label: `Update ${file}`, act: () => void updateLibrary(id) },
    { label: 'Keep as a copy in this workflow', act: () => keepCopy(id) },
  ];
}

function componentItems(id: string, spec: Spec, component: Component | undefined, editor: Editor): Item[] {
  const picked = editor.nodes.filter((n) => n.selected && isGraphNode(n)).map((n) => n.id);
  const members = picked.includes(id) ? picked : [id];
  return [
    {
      label: members.length > 1 ? `Make component of ${members.length} nodes` : 'Make component',
      keys: 'Ctrl+Shift+E',
      act: () => (editor.select(members), makeComponent()),
    },
    ...(component && !libraryOf(component) ? [{ label: 'Save to library…', act: () => askLibraryName(id) }] : []),
    ...(component ? [{ label: 'Unpack', act: () => void unpackComponent(id) }] : []),
    ...(component && !libraryOf(component)
      ? (spec?.params ?? []).map((p) => ({
          label: `Hide parameter ${p.name}`,
          act: () => editor.hideParam(id, p.name),
        }))
      : []),
    ...(component && !libraryOf(component)
      ? hiddenParams(component, useCatalog.getState().catalog).map((p) => ({
          label: `Expose parameter ${p.node}.${p.param}`,
          act: () => editor.exposeParam(id, p.node, p.param),
        }))
      : []),
  ];
}

function nodeItems(id: string, editor: Editor, lock: RunLock): Item[] {
  const node = editor.nodes.find((n) => n.id === id);
  const data = node && isGraphNode(node) ? node.data : undefined;
  const spec = data ? specOf(data, useCatalog.getState().catalog) : undefined;
  const mode = data?.mode;
  const collapsed = !!data?.collapsed;
  const toggle = (to: 'bypass' | 'mute'): void => editor.setMode([id], mode === to ? 'active' : to);
  return [
    ...runItems(id, spec, !!mode, lock),
    { label: mode === 'bypass' ? 'Stop bypassing' : 'Bypass', keys: 'Ctrl+B', act: () => toggle('bypass') },
    { label: mode === 'mute' ? 'Unmute' : 'Mute', keys: 'Ctrl+M', act: () => toggle('mute') },
    ...componentItems(id, spec, data?.component, editor),
    ...libraryEditItems(id, data?.libraryEdit),
    { label: 'Duplicate', act: () => editor.duplicate([id]) },
    { label: collapsed ? 'Unfold' : 'Fold to its title', act: () => editor.setCollapsed(id, !collapsed) },
    { label: 'Docs, outputs and logs', act: () => useUi.getState().inspect(id, 'docs') },
    ...(spec?.kind !== 'resource'
      ? [{ label: 'Results gallery', act: () => useGallery.getState().openGallery(id, spec?.outputs[0] ?? 'out') }]
      : []),
    { label: 'Clear its cached outputs', act: () => void clear(id) },
    { label: 'Delete', keys: 'Delete', danger: true, act: () => editor.deleteNode(id) },
  ];
}

function useItems(menu: Menu | null): Item[] {
  const flow = useReactFlow();
  const offline = useRun(isOffline);
  const running = useRun((s) => isActive(s.run));
  if (!menu) return [];
  const editor = useEditor.getState();
  const id = menu.id ?? '';
  if (menu.on === 'pane') return paneItems(menu, flow, editor);
  if (menu.on === 'edge') return edgeItems(menu, id, flow, editor);
  if (menu.on === 'group') return groupItems(id, editor);
  if (menu.on === 'comment')
    return [{ label: 'Delete the comment', keys: 'Delete', danger: true, act: () => editor.deleteNode(id) }];
  return nodeItems(id, editor, { offline, running });
}

/** A node's colours, one click each, and one to take its colour away. */
function Swatches({ id, close }: { id: string; close(): void }) {
  const set = (color: (typeof NODE_COLORS)[number] | null): void => {
    close();
    useEditor.getState().setColor(id, color);
  };
  return (
    <li role="none" className="gb-swatches">
      {NODE_COLORS.map((color) => (
        <button
          key={color}
          role="menuitem"
          aria-label={`Colour ${color}`}
          title={color}
          className={`gb-swatch gb-color-${color}`}
          onClick={() => set(color)}
        />
      ))}
      <button
        role="menuitem"
        aria-label="No colour"
        title="no colour"
        className="gb-swatch gb-swatch-none"
        onClick={() => set(null)}
      >
        ×
      </button>
    </li>
  );
}

export function ContextMenu() {
  const menu = useUi((s) => s.menu);
  const close = (): void => useUi.getState().openMenu(null);
  const items = useItems(menu);
  useEffect(() => {
    if (!menu) return;
    const onKey = (e: KeyboardEvent): void => {
      if (e.key === 'Escape') close();
    };
    window.addEventListener('keydown', onKey);
    window.addEventListener('blur', close);
    return () => {
      window.removeEventListener('keydown', onKey);
      window.removeEventListener('blur', close);
    };
  }, [menu]);
  if (!menu) return null;
  const left = Math.min(menu.x, window.innerWidth - 240);
  const top = Math.min(menu.y, window.innerHeight - 40 - items.length * 30);
  return (
    <div className="gb-menu-backdrop" onMouseDown={close} onContextMenu={(e) => (e.preventDefault(), close())}>
      <ul className="gb-menu" role="menu" style={{ left, top }} onMouseDown={(e) => e.stopPropagation()}>
        {items.map((item) => (
          <li key={item.label} role="none">
            <button
              role="menuitem"
              className={item.danger ? 'gb-danger-text' : ''}
              disabled={item.disabled}
              onClick={() => {
                close();
                item.act();
              }}
            >
              <span>{item.label}</span>
              {item.keys ? <kbd>{item.keys}</kbd> : null}
            </button>
          </li>
        ))}
        {menu.on === 'node' ? <Swatches id={menu.id ?? ''} close={close} /> : null}
      </ul>
    </div>
  );
}
