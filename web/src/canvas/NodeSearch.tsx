// The quick search that double-clicking the canvas opens: type, pick, and the node is placed there.

import { useMemo, useState } from 'react';
import { useReactFlow } from '@xyflow/react';
import { searchNodes, firstLine } from '../search';
import { useCatalog } from '../store/catalog';
import { useEditor } from '../store/editor';
import { useUi } from '../store/ui';

export function NodeSearch() {
  const at = useUi((s) => s.search);
  const close = (): void => useUi.getState().openSearch(null);
  const catalog = useCatalog((s) => s.catalog);
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);
  const { screenToFlowPosition } = useReactFlow();
  const found = useMemo(() => searchNodes(Object.values(catalog.nodes), query).slice(0, 12), [catalog, query]);
  if (!at) return null;
  const box = document.querySelector('.gb-canvas')?.getBoundingClientRect();
  const left = Math.max(8, Math.min(at.x - (box?.left ?? 0), (box?.width ?? 800) - 330));
  const top = Math.max(8, Math.min(at.y - (box?.top ?? 0), (box?.height ?? 600) - 400));
  const pick = (name: string): void => {
    useEditor.getState().addNode(name, screenToFlowPosition({ x: at.x, y: at.y }));
    setQuery('');
    close();
  };
  return (
    <div className="gb-search" style={{ left, top }} onMouseDown={(e) => e.stopPropagation()}>
      <input
        autoFocus
        className="gb-input"
        placeholder="Add a node…"
        aria-label="search nodes"
        value={query}
        onChange={(e) => {
          setQuery(e.target.value);
          setActive(0);
        }}
        onBlur={() => setTimeout(close, 150)}
        onKeyDown={(e) => {
          const step = e.key === 'ArrowDown' ? 1 : e.key === 'ArrowUp' ? -1 : 0;
          if (step) {
            e.preventDefault();
            setActive((a) => Math.max(0, Math.min(a + step, found.length - 1)));
          }
          if (e.key === 'Enter' && found[active]) pick(found[active].name);
          if (e.key === 'Escape') close();
        }}
      />
      <ul role="listbox">
        {found.map((spec, i) => (
          <li key={spec.name} role="option" aria-selected={i === active} className={i === active ? 'gb-active' : ''} onMouseDown={() => pick(spec.name)} onMouseEnter={() => setActive(i)}>
            <span className="gb-search-name">{spec.name}</span>
            <span className="gb-search-meta">{spec.category || spec.kind}</span>
            <small>{firstLine(spec.doc)}</small>
          </li>
        ))}
        {!found.length ? <li className="gb-empty">No node matches “{query}”.</li> : null}
      </ul>
    </div>
  );
}
