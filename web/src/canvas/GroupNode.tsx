// A group: a labelled, resizable frame; dragging it (by its frame or its name) moves the nodes
// inside; a click on the name edits it.

import { memo } from 'react';
import { NodeResizer, type NodeProps } from '@xyflow/react';
import { useEditor } from '../store/editor';
import type { GroupFlowNode } from '../workflow/flow';

function GroupNodeView({ id, data, selected }: NodeProps<GroupFlowNode>) {
  const setGroupLabel = useEditor((s) => s.setGroupLabel);
  const commit = useEditor((s) => s.commit);
  return (
    <div className={`gb-group${selected ? ' gb-selected' : ''}`} data-group={id}>
      <NodeResizer
        isVisible={selected}
        minWidth={160}
        minHeight={100}
        onResizeEnd={commit}
        lineClassName="gb-resize-line"
        handleClassName="gb-resize-handle"
      />
      <input
        className="gb-group-label"
        aria-label="group name"
        value={data.label}
        onChange={(e) => setGroupLabel(id, e.target.value)}
      />
    </div>
  );
}

export const GroupNode = memo(GroupNodeView);
