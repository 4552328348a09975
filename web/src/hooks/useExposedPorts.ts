// Inside a component opened in place: which of a node's ports are the component's own inputs and
// outputs (by port, the component's name for it), so the canvas can show them on the node.

import { useMemo } from 'react';
import { useEditor } from '../store/editor';

export interface Exposed {
  in: Record<string, string>;
  out: Record<string, string>;
}

/** `"in\tport\tname"` lines keep the selector's result a string, so nodes re-render only on change. */
export function useExposedPorts(id: string): Exposed {
  const key = useEditor((s) => {
    const body = s.inside.at(-1)?.body;
    if (!body) return '';
    const lines = (side: string, table: Record<string, { node: string; port: string }>) =>
      Object.entries(table)
        .filter(([, where]) => where.node === id)
        .map(([name, where]) => `${side}\t${where.port}\t${name}`);
    return [...lines('in', body.inputs), ...lines('out', body.outputs)].join('\n');
  });
  return useMemo(() => {
    const exposed: Exposed = { in: {}, out: {} };
    for (const line of key ? key.split('\n') : []) {
      const [side, port = '', name = ''] = line.split('\t');
      exposed[side === 'in' ? 'in' : 'out'][port] = name;
    }
    return exposed;
  }, [key]);
}
