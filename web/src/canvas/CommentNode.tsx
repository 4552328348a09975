// A comment on the canvas: Markdown shown as text; double-click to edit it, click away to finish.
// Its right edge widens it; it is saved in the file's `comments` and running ignores it.

import { memo, useEffect, useRef, useState } from 'react';
import { NodeResizeControl, type NodeProps } from '@xyflow/react';
import { Markdown } from '../panels/Markdown';
import { useEditor } from '../store/editor';
import type { CommentFlowNode } from '../workflow/flow';

function CommentNodeView({ id, data, selected }: NodeProps<CommentFlowNode>) {
  const setText = useEditor((s) => s.setCommentText);
  const [editing, setEditing] = useState(!data.text);
  const field = useRef<HTMLTextAreaElement>(null);
  // Focused once the menu that added it has closed and let go of the focus (focused at once,
  // or in the next frame, it lost the focus to the page as the menu went).
  useEffect(() => {
    if (!editing) return;
    const timer = setTimeout(() => field.current?.focus({ preventScroll: true }), 60);
    return () => clearTimeout(timer);
  }, [editing]);
  return (
    <div
      className={`gb-comment${selected ? ' gb-selected' : ''}`}
      data-comment={id}
      onDoubleClick={() => setEditing(true)}
    >
      <NodeResizeControl
        className="gb-resize nodrag"
        position="right"
        resizeDirection="horizontal"
        minWidth={140}
        maxWidth={900}
      />
      {editing ? (
        <textarea
          ref={field}
          className="gb-input gb-comment-text nodrag nowheel"
          aria-label="comment"
          placeholder="A note for whoever reads this workflow (Markdown)"
          value={data.text}
          rows={Math.max(3, data.text.split('\n').length + 1)}
          onChange={(e) => setText(id, e.target.value)}
          onBlur={() => setEditing(false)}
          onKeyDown={(e) => e.key === 'Escape' && setEditing(false)}
        />
      ) : (
        <div className="gb-comment-body" title="double-click to edit">
          {data.text ? <Markdown text={data.text} /> : <p className="gb-muted">Empty note: double-click to write.</p>}
        </div>
      )}
    </div>
  );
}

export const CommentNode = memo(CommentNodeView);
