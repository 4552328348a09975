// Above the canvas while a component is open in place: the way back out, one step per level.

import { useEditor } from '../store/editor';
import { editedLibrary } from '../store/inside';

export function ComponentPath() {
  const inside = useEditor((s) => s.inside);
  const file = useEditor((s) => s.file?.path ?? 'workflow');
  const library = editedLibrary(inside.at(-1));
  if (!inside.length) return null;
  const leave = (depth: number): void => useEditor.getState().leaveComponent(depth);
  return (
    <nav className="gb-component-path" aria-label="component path">
      <button className="gb-link" onClick={() => leave(0)} title="back to the workflow">
        {file}
      </button>
      {inside.map((frame, depth) => (
        <span key={frame.id}>
          <span className="gb-component-path-sep">›</span>
          {depth === inside.length - 1 ? (
            <strong aria-current="page">{frame.id}</strong>
          ) : (
            <button className="gb-link" onClick={() => leave(depth + 1)}>
              {frame.id}
            </button>
          )}
        </span>
      ))}
      <span className="gb-component-path-hint">
        {library
          ? `components/${library}.json: back out after editing to update the file or keep a copy here`
          : 'inside a component: its nodes show their own run; edits are kept when you go back out'}
      </span>
    </nav>
  );
}
