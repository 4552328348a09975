// While a wire is dragged over a handle that refuses it, a tooltip by the pointer says why
// (a type mismatch, a cycle, a step output into a parameter...).

import { useEffect, useState } from 'react';
import { type Connection, type ConnectionState, useConnection } from '@xyflow/react';
import { useCatalog } from '../store/catalog';
import { useEditor } from '../store/editor';
import { connectionProblem } from '../workflow/connections';

/** The wire a drag between two handles would make, source first whichever end it started from. */
export function wireOf(state: Pick<ConnectionState, 'fromHandle' | 'toHandle'>): Connection | null {
  const { fromHandle: from, toHandle: to } = state;
  if (!from || !to) return null;
  const [source, target] = from.type === 'source' ? [from, to] : [to, from];
  return {
    source: source.nodeId,
    sourceHandle: source.id ?? null,
    target: target.nodeId,
    targetHandle: target.id ?? null,
  };
}

function usePointerPosition(active: boolean): { x: number; y: number } | null {
  const [at, setAt] = useState<{ x: number; y: number } | null>(null);
  useEffect(() => {
    if (!active) return setAt(null);
    const move = (e: PointerEvent): void => setAt({ x: e.clientX, y: e.clientY });
    window.addEventListener('pointermove', move);
    return () => window.removeEventListener('pointermove', move);
  }, [active]);
  return at;
}

export function ConnectionHint() {
  const connection = useConnection();
  const refused = connection.inProgress && connection.toHandle !== null && connection.isValid === false;
  const at = usePointerPosition(connection.inProgress);
  if (!refused || !at) return null;
  const wire = wireOf(connection);
  const { nodes, edges } = useEditor.getState();
  const problem = wire ? connectionProblem(wire, nodes, edges, useCatalog.getState().catalog) : null;
  if (!problem) return null;
  return (
    <div className="gb-connection-hint" role="tooltip" style={{ left: at.x + 14, top: at.y + 14 }}>
      {problem}
    </div>
  );
}
