// The node palette: node kinds by category, each marked with where it comes from (an installed
// pack, custom_nodes/, the examples), a search box, a filter by origin, and node files that
// failed to load.

import { useMemo, useState } from 'react';
import { DRAG_TYPE } from '../canvas/Canvas';
import type { NodeInfo } from '../catalog';
import { type OriginFilter, originBadge, originChoices, originText } from '../origins';
import { firstLine, paletteGroups } from '../search';
import { useCatalog } from '../store/catalog';
import { useEditor } from '../store/editor';
import { useUi } from '../store/ui';
import { useToggleSet } from '../hooks/useToggleSet';

function addAtCenter(name: string): void {
  const pane = document.querySelector('.react-flow__viewport');
  const transform = pane ? getComputedStyle(pane).transform : 'none';
  const matrix = transform !== 'none' ? new DOMMatrixReadOnly(transform) : new DOMMatrixReadOnly();
  const canvas = document.querySelector('.gb-canvas')?.getBoundingClientRect();
  const cx = (canvas?.width ?? 800) / 2 - 120;
  const cy = (canvas?.height ?? 600) / 2 - 60;
  const jitter = (useEditor.getState().nodes.length % 5) * 24;
  useEditor
    .getState()
    .addNode(name, { x: (cx - matrix.e) / matrix.a + jitter, y: (cy - matrix.f) / matrix.d + jitter });
}

function PaletteItem({ spec }: { spec: NodeInfo }) {
  const badge = originBadge(spec);
  return (
    <li
      className={`gb-palette-item gb-kind-${spec.kind}`}
      draggable
      data-node-type={spec.name}
      data-origin={spec.pack_kind}
      title={`${firstLine(spec.doc) || spec.name}\n\nFrom: ${originText(spec)}. Drag onto the canvas, or double-click to add.`}
      onDragStart={(e) => {
        e.dataTransfer.setData(DRAG_TYPE, spec.name);
        e.dataTransfer.effectAllowed = 'copy';
      }}
      onDoubleClick={() => addAtCenter(spec.name)}
    >
      <span className="gb-dot" />
      <span className="gb-palette-name">{spec.name}</span>
      {badge ? <span className={`gb-origin gb-origin-${spec.pack_kind}`}>{badge}</span> : null}
      <span className="gb-palette-kind">{spec.kind}</span>
    </li>
  );
}

type Choice = ReturnType<typeof originChoices>[number];

interface FiltersProps {
  query: string;
  setQuery: (query: string) => void;
  choices: Choice[];
  origin: OriginFilter;
  setOrigin: (origin: OriginFilter) => void;
}

function PaletteFilters({ query, setQuery, choices, origin, setOrigin }: FiltersProps) {
  return (
    <div className="gb-palette-filters">
      <input
        className="gb-input gb-filter"
        placeholder="Search nodes"
        aria-label="filter nodes"
        value={query}
        onChange={(e) => setQuery(e.target.value)}
      />
      {choices.length ? (
        <select
          className="gb-input gb-origin-filter"
          aria-label="node origin"
          title="Show the nodes of one origin"
          value={origin}
          onChange={(e) => setOrigin(e.target.value as OriginFilter)}
        >
          {choices.map((c) => (
            <option key={c.value} value={c.value}>
              {c.label} ({c.count})
            </option>
          ))}
        </select>
      ) : null}
    </div>
  );
}

/** The catalog's error and the node files that failed to load (a click says why). */
function LoadErrors() {
  const failures = useCatalog((s) => s.catalog.failures);
  const error = useCatalog((s) => s.error);
  const notify = useUi((s) => s.notify);
  return (
    <>
      {error ? <div className="gb-banner gb-banner-error">{error}</div> : null}
      {failures.map((f) => (
        <button
          key={f.path}
          className="gb-banner gb-banner-error"
          title={f.traceback}
          onClick={() => notify(`${f.path}: ${f.error}`, 'error')}
        >
          <strong>{f.path.split('/').pop()}</strong> failed to load: {f.error}
        </button>
      ))}
    </>
  );
}

function Category({
  category,
  specs,
  closed,
  toggle,
}: {
  category: string;
  specs: NodeInfo[];
  closed: boolean;
  toggle: () => void;
}) {
  return (
    <section className="gb-category">
      <button className="gb-category-title" onClick={toggle} aria-expanded={!closed}>
        <span className="gb-caret">{closed ? '▸' : '▾'}</span>
        {category}
        <span className="gb-muted">{specs.length}</span>
      </button>
      {closed ? null : (
        <ul>
          {specs.map((spec) => (
            <PaletteItem key={spec.name} spec={spec} />
          ))}
        </ul>
      )}
    </section>
  );
}

export function Palette() {
  const catalog = useCatalog((s) => s.catalog);
  const [query, setQuery] = useState('');
  const [origin, setOrigin] = useState<OriginFilter>('all');
  const [closed, toggle] = useToggleSet<string>();
  const specs = useMemo(() => Object.values(catalog.nodes), [catalog]);
  const choices = useMemo(() => originChoices(specs), [specs]);
  // A filter whose origin left the catalog (its pack was removed) shows everything again.
  const shownOrigin = choices.some((c) => c.value === origin) ? origin : 'all';
  const groups = useMemo(() => paletteGroups(specs, query, shownOrigin), [specs, query, shownOrigin]);
  return (
    <div className="gb-palette">
      <PaletteFilters query={query} setQuery={setQuery} choices={choices} origin={shownOrigin} setOrigin={setOrigin} />
      <LoadErrors />
      <div className="gb-scroll">
        {groups.map(([category, specs]) => (
          <Category
            key={category}
            category={category}
            specs={specs}
            closed={closed.has(category)}
            toggle={() => toggle(category)}
          />
        ))}
        {query && !groups[0]?.[1].length ? (
          <p className="gb-empty">
            No node matches “{query}”
            {shownOrigin === 'all' ? '' : ` in ${choices.find((c) => c.value === shownOrigin)?.label ?? shownOrigin}`}.
          </p>
        ) : null}
      </div>
    </div>
  );
}
