// The quick search that double-clicking the canvas opens: type, pick, and the node is placed there.
// Opened by a wire dropped on empty canvas, it lists the nodes that wire can join, and joins it.

import { useMemo, useState } from 'react';
import { useReactFlow } from '@xyflow/react';
import type { NodeInfo } from '../catalog';
import { searchNodes, firstLine } from '../search';
import { useCatalog } from '../store/catalog';
import { useEditor } from '../store/editor';
import { useUi } from '../store/ui';
import { completeWire } from '../workflow/connections';

type From = NonNullable<ReturnType<typeof useUi.getState>['search']>['from'];
type Catalog = ReturnType<typeof useCatalog.getState>['catalog'];

/** The node kinds that match the query (and can join the loose wire, if one opened the search). */
function useFound(catalog: Catalog, query: string, from: From): NodeInfo[] {
  return useMemo(() => {
    const nodes = useEditor.getState().nodes;
    const fits = (spec: NodeInfo): boolean => !from || completeWire(from, spec, '\u0000new', nodes, catalog) !== null;
    const other = from && nodes.find((n) => n.id === from.node);
    const near = other && other.type === 'graph' ? catalog.nodes[String(other.data.type)] : undefined;
    return searchNodes(Object.values(catalog.nodes).filter(fits), query, near).slice(0, 40);
  }, [catalog, query, from]);
}

/** Where the box stands inside the canvas: at the click, kept inside. */
function boxAt(x: number, y: number): { left: number; top: number } {
  const box = document.querySelector('.gb-canvas')?.getBoundingClientRect();
  return {
    left: Math.max(8, Math.min(x - (box?.left ?? 0), (box?.width ?? 800) - 330)),
    top: Math.max(8, Math.min(y - (box?.top ?? 0), (box?.height ?? 600) - 400)),
  };
}

/** Adds the node at the flow position, joined to the loose wire when there is one. */
function placeNode(name: string, place: { x: number; y: number }, from: From, catalog: Catalog): void {
  const editor = useEditor.getState();
  // A node that feeds the loose end is placed to its left, one that takes from it to its right.
  const id = editor.addNode(
    name,
    from?.side === 'target' ? { x: place.x - 260, y: place.y - 20 } : { x: place.x, y: place.y - 20 },
  );
  const spec = catalog.nodes[name];
  const wire = from && spec ? completeWire(from, spec, id, useEditor.getState().nodes, catalog) : null;
  if (wire) {
    const problem = useEditor.getState().connect(wire, catalog);
    if (problem) useUi.getState().notify(problem, 'error');
  }
}

interface ListProps {
  found: NodeInfo[];
  active: number;
  query: string;
  pick: (name: string) => void;
  setActive: (i: number) => void;
}

function FoundList({ found, active, query, pick, setActive }: ListProps) {
  return (
    <ul role="listbox">
      {found.map((spec, i) => (
        <li
          key={spec.name}
          role="option"
          aria-selected={i === active}
          className={i === active ? 'gb-active' : ''}
          onMouseDown={() => pick(spec.name)}
          onMouseEnter={() => setActive(i)}
        >
          <span className="gb-search-name">{spec.name}</span>
          <span className="gb-search-meta">{spec.category || spec.kind}</span>
          <small>{firstLine(spec.doc)}</small>
        </li>
      ))}
      {!found.length ? <li className="gb-empty">No node matches “{query}”.</li> : null}
    </ul>
  );
}

export function NodeSearch() {
  const at = useUi((s) => s.search);
  const close = (): void => useUi.getState().openSearch(null);
  const catalog = useCatalog((s) => s.catalog);
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);
  const { screenToFlowPosition } = useReactFlow();
  const from = at?.from;
  const found = useFound(catalog, query, from);
  if (!at) return null;
  const pick = (name: string): void => {
    placeNode(name, screenToFlowPosition({ x: at.x, y: at.y }), from, catalog);
    setQuery('');
    close();
  };
  const onKeyDown = (e: React.KeyboardEvent<HTMLInputElement>): void => {
    const step = e.key === 'ArrowDown' ? 1 : e.key === 'ArrowUp' ? -1 : 0;
    if (step) {
      e.preventDefault();
      setActive((a) => Math.max(0, Math.min(a + step, found.length - 1)));
    }
    if (e.key === 'Enter' && found[active]) pick(found[active].name);
    if (e.key === 'Escape') close();
  };
  return (
    <div className="gb-search" style={boxAt(at.x, at.y)} onMouseDown={(e) => e.stopPropagation()}>
      <input
        autoFocus
        className="gb-input"
        placeholder={from ? 'Add a node to join the wire…' : 'Add a node…'}
        aria-label="search nodes"
        value={query}
        onChange={(e) => {
          setQuery(e.target.value);
          setActive(0);
        }}
        onBlur={() => setTimeout(close, 150)}
        onKeyDown={onKeyDown}
      />
      <FoundList found={found} active={active} query={query} pick={pick} setActive={setActive} />
    </div>
  );
}
