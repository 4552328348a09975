// A node dragged from the palette and dropped on a panel beside the canvas (the inspector) is
// not lost: it lands on the canvas, at the height it was dropped, just inside the canvas's edge.

import { type DragEvent, useCallback } from 'react';
import { useReactFlow } from '@xyflow/react';
import { DRAG_TYPE } from '../canvas/Canvas';
import { useEditor } from '../store/editor';

/** How far inside the canvas's right edge the node's left side lands, in screen pixels. */
const INSIDE = 320;

export function useDropBeside(): { onDragOver(event: DragEvent): void; onDrop(event: DragEvent): void } {
  const flow = useReactFlow();
  const onDragOver = useCallback((event: DragEvent) => {
    if (!event.dataTransfer.types.includes(DRAG_TYPE)) return; // a file goes to the page's handler
    event.preventDefault();
    event.dataTransfer.dropEffect = 'copy';
  }, []);
  const onDrop = useCallback(
    (event: DragEvent) => {
      const type = event.dataTransfer.getData(DRAG_TYPE);
      const canvas = document.querySelector('.gb-canvas')?.getBoundingClientRect();
      if (!type || !canvas) return;
      event.preventDefault();
      const x = Math.max(canvas.left + 20, canvas.right - INSIDE);
      useEditor.getState().addNode(type, flow.screenToFlowPosition({ x, y: event.clientY }));
    },
    [flow],
  );
  return { onDragOver, onDrop };
}
