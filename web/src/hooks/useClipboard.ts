// Copy, cut and paste of nodes; the clip lives in localStorage so another window can paste it.

import { useCallback } from 'react';
import { useReactFlow } from '@xyflow/react';
import { type Clip, isClip } from '../store/clipboard';
import { useEditor } from '../store/editor';
import { lastPointer } from './usePointer';

const KEY = 'graphbook.clip';
let memory: Clip | null = null;

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
  const paste = useCallback(() => {
    const clip = readClip();
    if (!clip || !clip.nodes.length) return false;
    const viewport = getViewport();
    const fallback = { x: (-viewport.x + 80) / viewport.zoom, y: (-viewport.y + 80) / viewport.zoom };
    const pointer = lastPointer();
    const left = Math.min(...clip.nodes.map((n) => n.position.x));
    const top = Math.min(...clip.nodes.map((n) => n.position.y));
    const at = pointer ?? fallback;
    const same = Math.abs(at.x - left) < 8 && Math.abs(at.y - top) < 8;
    useEditor.getState().paste(clip, same ? { x: at.x + 40, y: at.y + 40 } : at);
    return true;
  }, [getViewport]);
  return { copy, cut, paste };
}
