// Keyboard shortcuts of the editor. Typing in a field keeps its own keys (and its own undo),
// except for save and run.

import { useEffect } from 'react';
import { useReactFlow } from '@xyflow/react';
import { makeComponent } from '../actions/components';
import { saveFile } from '../actions/files';
import { run } from '../actions/run';
import { useEditor } from '../store/editor';
import { useUi } from '../store/ui';
import { type ClipboardActions, useClipboard } from './useClipboard';

export const SHORTCUTS: [keys: string, action: string][] = [
  ['Ctrl+S', 'save'],
  ['Ctrl+Enter', 'run the workflow'],
  ['Ctrl+Z / Ctrl+Shift+Z', 'undo / redo'],
  ['Ctrl+C / Ctrl+X / Ctrl+V', 'copy / cut / paste nodes (JSON on the clipboard)'],
  ['Delete', 'delete the selection'],
  ['Ctrl+A', 'select all'],
  ['Ctrl+G / Ctrl+Shift+G', 'group / ungroup'],
  ['Ctrl+Shift+E', 'make a component of the selected nodes'],
  ['Double-click a component', 'open it in place (the path above the canvas leads back out)'],
  ['Double-click a title', "rename the node (Enter keeps it, Esc doesn't)"],
  ['Ctrl+B / Ctrl+M', 'bypass / mute the selected nodes (again: run them)'],
  ['Double-click a wire', 'add a reroute point (drag it; double-click it to remove)'],
  ['Double-click, Ctrl+K', 'add a node by name'],
  ['Shift+drag', 'box-select'],
  ['Shift+click', 'add a node to the selection (or take it out)'],
  ['F', 'fit the view'],
  ['[ / ] / `', 'fold the side panel / inspector / console'],
  ['Esc', 'close (the inspector too), deselect'],
  ['?', 'show these keys'],
];

/** A handler returns false when the key did nothing, so the browser keeps its default. */
type Handler = (shift: boolean) => boolean | void;

function canvasCenter(): { x: number; y: number } {
  const box = document.querySelector('.gb-canvas')?.getBoundingClientRect();
  return box ? { x: box.left + box.width / 2 - 160, y: box.top + 80 } : { x: 400, y: 120 };
}

function typing(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return (
    !!el && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT' || el.isContentEditable)
  );
}

/** Keys held with Ctrl (or Cmd); the first two also work while typing in a field. */
function withModifier(clipboard: ClipboardActions): Record<string, Handler> {
  const editor = () => useEditor.getState();
  return {
    s: () => void saveFile(),
    enter: () => void run('all'),
    z: (shift) => (shift ? editor().redo() : editor().undo()),
    y: () => editor().redo(),
    c: () => clipboard.copy(),
    x: () => clipboard.cut(),
    v: () => clipboard.paste(),
    a: () => editor().select(editor().nodes.map((n) => n.id)),
    g: (shift) => (shift ? editor().ungroupSelection() : editor().groupSelection()),
    e: (shift) => (shift ? makeComponent() : false),
    b: () => editor().toggleMode('bypass'),
    m: () => editor().toggleMode('mute'),
    k: () => useUi.getState().openSearch(canvasCenter()),
  };
}

function plain(fit: () => void): Record<string, Handler> {
  const remove: Handler = () => useEditor.getState().deleteSelection();
  return {
    delete: remove,
    backspace: remove,
    escape: () => {
      useUi.getState().openSearch(null);
      useUi.getState().showShortcuts(false);
      useUi.getState().inspect(null); // the inspector closes on the node, as its × does
      useEditor.getState().select([]);
      return false;
    },
    f: () => fit(),
    '[': () => useUi.getState().togglePanel('side'),
    ']': () => useUi.getState().togglePanel('inspector'),
    '`': () => useUi.getState().togglePanel('console'),
    '?': () => useUi.getState().showShortcuts(),
  };
}

export function useShortcuts(): void {
  const { fitView } = useReactFlow();
  const clipboard = useClipboard();
  useEffect(() => {
    const modified = withModifier(clipboard);
    const unmodified = plain(() => void fitView({ padding: 0.2, duration: 200 }));
    const onKey = (event: KeyboardEvent): void => {
      const key = event.key.toLowerCase();
      const mod = event.ctrlKey || event.metaKey;
      const handler = mod ? modified[key] : event.altKey ? undefined : unmodified[key];
      if (!handler) return;
      if (typing(event.target) && !(mod && (key === 's' || key === 'enter'))) return;
      if (handler(event.shiftKey) !== false) event.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [fitView, clipboard]);
}
