// Fitting the workflow in view each time the editor loads one (its revision changes).

import { useEffect, useState } from 'react';
import { type ReactFlowInstance, useNodesInitialized, useReactFlow } from '@xyflow/react';
import { useEditor } from '../store/editor';

/** Below this zoom node labels are too small to read. */
export const READABLE_ZOOM = 0.75;

/**
 * Fits the workflow in view; when that would make it unreadably small, shows it at a readable
 * zoom from its left edge instead (where a pipeline starts), centred vertically if it fits.
 */
async function fitReadable(flow: ReactFlowInstance): Promise<void> {
  await flow.fitView({ padding: 0.15, maxZoom: 1 });
  if (flow.getViewport().zoom >= READABLE_ZOOM) return;
  const bounds = flow.getNodesBounds(flow.getNodes());
  const pane = document.querySelector('.gb-canvas')?.getBoundingClientRect();
  const height = bounds.height * READABLE_ZOOM;
  const top = pane && height < pane.height - 60 ? (pane.height - height) / 2 : 40;
  await flow.setViewport({ x: 40 - bounds.x * READABLE_ZOOM, y: top - bounds.y * READABLE_ZOOM, zoom: READABLE_ZOOM });
}

/** Whether the current revision has been fitted in view (once its nodes are measured). */
export function useFitted(): boolean {
  const revision = useEditor((s) => s.revision);
  const count = useEditor((s) => s.nodes.length);
  const flow = useReactFlow();
  const measured = useNodesInitialized();
  const [fitted, setFitted] = useState(-1);
  useEffect(() => {
    if (fitted === revision || (!measured && count)) return;
    if (!count) return setFitted(revision);
    void fitReadable(flow).then(() => setFitted(revision));
  }, [revision, measured, fitted, count, flow]);
  return fitted === revision;
}
