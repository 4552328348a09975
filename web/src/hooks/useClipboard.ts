// Copy, cut and paste of nodes. A copy goes to this browser's localStorage (another window of it
// can paste it) and, as JSON text, to the system clipboard, so that another browser, or a chat
// or a text file, gets it too; pasting such JSON (a copied selection or a whole workflow file)
// adds its nodes, and Ctrl+V with anything else pastes what this browser copied last.

import { useCallback, useEffect } from 'react';
import { useReactFlow } from '@xyflow/react';
import { type Clip, clipFromText, isClip } from '../store/clipboard';
import { useEditor } from '../store/editor';
import { lastPointer } from './usePointer';

const KEY = 'graphbook.clip';
let memory: Clip | null = null;
/** Ctrl+V was pressed: unless the paste event brings JSON nodes, the stored clip is pasted. */
let pending: ReturnType<typeof setTimeout> | undefined;

function readClip(): Clip | null {
  try {
    const data: unknown = JSON.parse(localStorage.getItem(KEY) ?? 'null');
    return isClip(data) ? data : memory;
  } catch {
    return memory;
  }
}

function writeClip(clip: Clip): void {
  memory = clip;
  try {
    localStorage.setItem(KEY, JSON.stringify(clip));
  } catch {
    /* too large for storage: this window still has it */
  }
  // Allowed within the key press; where it is not, the copy stays in this browser.
  navigator.clipboard?.writeText(JSON.stringify(clip, null, 2)).catch(() => undefined);
}

function typing(): boolean {
  const el = document.activeElement as HTMLElement | null;
  return !!el && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.isContentEditable);
}

export interface ClipboardActions {
  copy(): boolean;
  cut(): boolean;
  paste(): boolean;
}

export function useClipboard(): ClipboardActions {
  const { getViewport } = useReactFlow();
  const copy = useCallback(() => {
    const clip = useEditor.getState().copySelection();
    if (clip) writeClip(clip);
    return !!clip;
  }, []);
  const cut = useCallback(() => {
    if (!copy()) return false;
    useEditor.getState().deleteSelection();
    return true;
  }, [copy]);
  const pasteClip = useCallback(
    (clip: Clip) => {
      const viewport = getViewport();
      const fallback = { x: (-viewport.x + 80) / viewport.zoom, y: (-viewport.y + 80) / viewport.zoom };
      const pointer = lastPointer();
      const left = Math.min(...clip.nodes.map((n) => n.position.x));
      const top = Math.min(...clip.nodes.map((n) => n.position.y));
      const at = pointer ?? fallback;
      const same = Math.abs(at.x - left) < 8 && Math.abs(at.y - top) < 8;
      useEditor.getState().paste(clip, same ? { x: at.x + 40, y: at.y + 40 } : at);
    },
    [getViewport],
  );
  /** Ctrl+V: the browser's paste event comes next; the stored clip is pasted unless it has nodes. */
  const paste = useCallback(() => {
    const clip = readClip();
    clearTimeout(pending);
    pending = setTimeout(() => clip?.nodes.length && pasteClip(clip), 0);
    return false;
  }, [pasteClip]);
  useEffect(() => {
    const onPaste = (event: ClipboardEvent): void => {
      if (typing()) return;
      const clip = clipFromText(event.clipboardData?.getData('text/plain') ?? '');
      if (!clip) return;
      clearTimeout(pending);
      event.preventDefault();
      pasteClip(clip);
    };
    window.addEventListener('paste', onPaste);
    return () => window.removeEventListener('paste', onPaste);
  }, [pasteClip]);
  return { copy, cut, paste };
}
