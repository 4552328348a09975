// Where the pointer last was on the canvas, in flow coordinates: pasting puts nodes there.

import { useCallback } from 'react';
import type { MouseEvent } from 'react';
import { useReactFlow } from '@xyflow/react';

let last: { x: number; y: number } | null = null;

export function lastPointer(): { x: number; y: number } | null {
  return last;
}

export function usePointer(): (event: MouseEvent) => void {
  const { screenToFlowPosition } = useReactFlow();
  return useCallback(
    (event: MouseEvent) => {
      last = screenToFlowPosition({ x: event.clientX, y: event.clientY });
    },
    [screenToFlowPosition],
  );
}
