// The results gallery: every dict a node handed on in this run as a grid of thumbnails, filtered
// and sorted by the server, its fields on hover, a click shows one in the image viewer. Only the
// rows in view are in the page (and fetched); it refreshes what is in view as the run goes on.

import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { type GalleryQuery, fetchGalleryPage } from '../api/gallery';
import { useNodeRun } from '../hooks/useNodeRun';
import { type ImagePreview, type Preview, imageOf, shortText } from '../preview';
import type { GalleryRow } from '../protocol';
import { useEditor } from '../store/editor';
import { type GalleryTarget, useGallery } from '../store/gallery';
import { useUi } from '../store/ui';
import { Backdrop } from '../widgets/Backdrop';
import { titleOf } from '../workflow/flow';
import '../styles/gallery.css';

const CELL_W = 172;
const CELL_H = 204;
const PAGE = 120;
/** Rows drawn above and below the visible ones, so a scroll shows tiles already there. */
const OVERSCAN = 1;
/** At most one refresh of the rows in view this often while the run hands on more. */
const LIVE_MS = 500;

interface Summary {
  total: number;
  matched: number;
  fields: string[];
  numeric: string[];
}

interface Hovered {
  row: GalleryRow;
  rect: DOMRect;
}

export function Gallery() {
  const target = useGallery((s) => s.target);
  const workflow = useEditor((s) => s.file?.path ?? '');
  useEffect(() => {
    if (target && target.workflow !== workflow) useGallery.getState().closeGallery();
  }, [target, workflow]);
  if (!target || target.workflow !== workflow) return null;
  return <GalleryDialog key={`${target.node}:${target.output}`} target={target} />;
}

interface View {
  top: number;
  width: number;
  height: number;
}

interface Shown {
  position: number;
  row: GalleryRow | undefined;
}

/** What the tools ask for: the filter (applied a moment after typing stops, or on Enter) and the sort. */
function useQueryTools(workflow: string, target: GalleryTarget) {
  const [typed, setTyped] = useState('');
  const [filter, setFilter] = useState('');
  const [sort, setSort] = useState('');
  const [order, setOrder] = useState<'asc' | 'desc'>('asc');
  const query = useMemo<GalleryQuery>(
    () => ({ workflow, node: target.node, output: target.output, filter, sort, order }),
    [workflow, target, filter, sort, order],
  );
  useEffect(() => {
    const timer = setTimeout(() => setFilter(typed.trim()), 350);
    return () => clearTimeout(timer);
  }, [typed]);
  return { query, typed, setTyped, filter, setFilter, sort, setSort, order, setOrder };
}

type Tools = ReturnType<typeof useQueryTools>;

/** The grid's scroll position and size, back to the top when the query changes. */
function useViewport(query: GalleryQuery) {
  const [view, setView] = useState<View>({ top: 0, width: 900, height: 600 });
  const viewport = useRef<HTMLDivElement>(null);
  useEffect(() => {
    viewport.current?.scrollTo({ top: 0 });
    setView((v) => ({ ...v, top: 0 }));
  }, [query]);
  useLayoutEffect(() => {
    const element = viewport.current;
    if (!element) return;
    const measure = (): void =>
      setView({ top: element.scrollTop, width: element.clientWidth, height: element.clientHeight });
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return { view, setView, viewport };
}

function useEscapeCloses(close: () => void): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      if (e.key === 'Escape' && !useUi.getState().viewer) close();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [close]);
}

function useNodeLabel(node: string): string {
  return useEditor((s) => {
    const found = s.nodes.find((n) => n.id === node);
    return found?.type === 'graph' ? titleOf(found.data) : node;
  });
}

function shownTiles(pages: Pages, first: number, last: number): Shown[] {
  const shown: Shown[] = [];
  for (let position = first; position < last; position++)
    shown.push({ position, row: pages.rows.get(Math.floor(position / PAGE) * PAGE)?.[position % PAGE] });
  return shown;
}

/** Opens the image viewer on the tiles drawn that have an image, at the one clicked. */
function openViewer(shown: Shown[], position: number): void {
  const loaded = shown.filter((s) => s.row?.thumb || s.row?.url);
  const images = loaded.map((s) => asImage(s.row as GalleryRow));
  useUi.getState().view(
    images,
    Math.max(
      0,
      loaded.findIndex((s) => s.position === position),
    ),
  );
}

function GalleryDialog({ target }: { target: GalleryTarget }) {
  const workflow = useEditor((s) => s.file?.path ?? '');
  const label = useNodeLabel(target.node);
  const handed = useNodeRun(target.node)?.counts[target.output] ?? 0;
  const close = useGallery((s) => s.closeGallery);
  const tools = useQueryTools(workflow, target);
  const { pages, summary, error, tick } = usePages(tools.query, handed);
  const { view, setView, viewport } = useViewport(tools.query);
  const [hovered, setHovered] = useState<Hovered | null>(null);
  useEscapeCloses(close);
  const matched = summary?.matched ?? 0;
  const window_ = visibleWindow(view, matched);
  useEffect(() => pages.need(window_.first, window_.last), [pages, window_.first, window_.last, tick]);
  const shown = shownTiles(pages, window_.first, window_.last);
  const onScroll = (top: number): void => {
    setView((v) => ({ ...v, top }));
    setHovered(null); // the tile under it has moved
  };
  return (
    <Backdrop className="gb-gallery-backdrop" onClose={close}>
      <section className="gb-gallery" role="dialog" aria-label="results gallery">
        <GalleryHead label={label} output={target.output} summary={summary} filtered={!!tools.filter} close={close} />
        <GalleryTools tools={tools} summary={summary} />
        <GalleryNotes error={error} outside={shown.find((s) => s.row?.reason)?.row?.reason} />
        <div className="gb-gallery-grid" ref={viewport} onScroll={(e) => onScroll(e.currentTarget.scrollTop)}>
          <div className="gb-gallery-sizer" style={{ height: Math.ceil(matched / window_.columns) * CELL_H }}>
            {shown.map(({ position, row }) => (
              <Tile
                key={position}
                position={position}
                columns={window_.columns}
                row={row}
                caption={tools.sort}
                onOpen={() => openViewer(shown, position)}
                onHover={(rect) => setHovered(row && rect ? { row, rect } : null)}
              />
            ))}
          </div>
          {summary && !matched && !error ? (
            <p className="gb-empty">{summary.total ? 'No outputs match this filter.' : 'Nothing handed on yet.'}</p>
          ) : null}
        </div>
      </section>
      {hovered ? <HoverCard hovered={hovered} /> : null}
    </Backdrop>
  );
}

interface HeadProps {
  label: string;
  output: string;
  summary: Summary | null;
  filtered: boolean;
  close: () => void;
}

function GalleryHead({ label, output, summary, filtered, close }: HeadProps) {
  const matched = summary?.matched ?? 0;
  return (
    <header className="gb-gallery-head">
      <h2>
        {label} <span className="gb-muted">· {output}</span>
      </h2>
      <span className="gb-gallery-count" data-matched={matched} data-total={summary?.total ?? 0}>
        {summary ? (filtered ? `${matched} of ${summary.total} match` : `${summary.total} handed on`) : 'loading…'}
      </span>
      <button className="gb-icon" aria-label="close the gallery" onClick={close}>
        ×
      </button>
    </header>
  );
}

function GalleryTools({ tools, summary }: { tools: Tools; summary: Summary | null }) {
  const { typed, setTyped, setFilter, sort, setSort, order, setOrder } = tools;
  return (
    <div className="gb-gallery-tools">
      <input
        className="gb-input gb-gallery-filter"
        aria-label="filter outputs"
        placeholder='filter: prediction == "cat" and confidence < 0.5'
        title={`FIELD OP VALUE, joined by "and"; OP one of == != < <= > >= contains${summary?.fields.length ? `; fields: ${summary.fields.join(', ')}` : ''}`}
        value={typed}
        spellCheck={false}
        onChange={(e) => setTyped(e.target.value)}
        onKeyDown={(e) => e.key === 'Enter' && setFilter(typed.trim())}
      />
      <label className="gb-gallery-sort">
        sort by
        <select className="gb-input" aria-label="sort by" value={sort} onChange={(e) => setSort(e.target.value)}>
          <option value="">order handed on</option>
          {(summary?.numeric ?? []).map((f) => (
            <option key={f} value={f}>
              {f}
            </option>
          ))}
        </select>
      </label>
      <button
        className="gb-button"
        aria-label="sort order"
        title="ascending or descending"
        onClick={() => setOrder(order === 'asc' ? 'desc' : 'asc')}
      >
        {order === 'asc' ? '↑ ascending' : '↓ descending'}
      </button>
    </div>
  );
}

function GalleryNotes({ error, outside }: { error: string | null; outside: string | null | undefined }) {
  return (
    <>
      {error ? (
        <div className="gb-banner gb-banner-error" role="alert">
          {error}
        </div>
      ) : null}
      {outside ? (
        <p className="gb-gallery-note" role="note">
          Some full images are not shown: {outside}
        </p>
      ) : null}
    </>
  );
}

function Tile({
  position,
  columns,
  row,
  caption,
  onOpen,
  onHover,
}: {
  position: number;
  columns: number;
  row: GalleryRow | undefined;
  caption: string;
  onOpen(): void;
  onHover(rect: DOMRect | null): void;
}) {
  const style = { left: (position % columns) * CELL_W, top: Math.floor(position / columns) * CELL_H };
  if (!row) return <div className="gb-gallery-tile gb-gallery-loading" style={style} />;
  const src = row.thumb ?? row.url;
  const shownField = caption || Object.keys(row.fields)[0];
  return (
    <button
      className="gb-gallery-tile"
      style={style}
      data-index={row.index}
      aria-label={`output #${row.index}`}
      onClick={onOpen}
      onMouseEnter={(e) => onHover(e.currentTarget.getBoundingClientRect())}
      onMouseLeave={() => onHover(null)}
    >
      {src ? (
        <img src={src} alt="" loading="lazy" draggable={false} />
      ) : (
        <span className="gb-gallery-noimage">no image</span>
      )}
      <span className="gb-gallery-caption">
        <span className="gb-muted">#{row.index}</span>
        {shownField !== undefined && shownField in row.fields ? (
          <span>{shortText(row.fields[shownField], 24)}</span>
        ) : null}
        {row.reason ? (
          <span className="gb-gallery-thumbonly" title={row.reason}>
            thumbnail only
          </span>
        ) : null}
      </span>
    </button>
  );
}

function HoverCard({ hovered }: { hovered: Hovered }) {
  const { row, rect } = hovered;
  const width = 260;
  const left = rect.right + 8 + width < window.innerWidth ? rect.right + 8 : Math.max(8, rect.left - width - 8);
  const top = Math.max(8, Math.min(rect.top, window.innerHeight - 240));
  return (
    <div className="gb-gallery-card" role="tooltip" style={{ left, top, width }}>
      <div className="gb-gallery-card-title">output #{row.index}</div>
      <dl>
        {Object.entries(row.fields).map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{shortText(v, 80)}</dd>
          </div>
        ))}
      </dl>
      {row.path ? <div className="gb-gallery-card-path">{row.path}</div> : null}
      {row.reason ? <div className="gb-gallery-card-reason">{row.reason}</div> : null}
    </div>
  );
}

/** The tiles (positions in the filtered, sorted order) to draw for the scroll position. */
function visibleWindow(view: View, matched: number) {
  const columns = Math.max(1, Math.floor(view.width / CELL_W));
  const firstRow = Math.max(0, Math.floor(view.top / CELL_H) - OVERSCAN);
  const lastRow = Math.ceil((view.top + view.height) / CELL_H) + OVERSCAN;
  return { columns, first: Math.min(matched, firstRow * columns), last: Math.min(matched, lastRow * columns) };
}

function asImage(row: GalleryRow): ImagePreview {
  const fields = { ...(row.fields as Record<string, Preview>), index: row.index };
  return imageOf(row.url, row.thumb, row.path ? { ...fields, path: row.path } : fields, { outside: row.reason });
}

interface Pages {
  rows: Map<number, GalleryRow[]>;
  /** Fetch the pages holding positions first..last (exclusive) not fetched since the last change. */
  need(first: number, last: number): void;
}

/** Starts over when the query changes: the pages fetched are forgotten. The first query is
 * fetched as the grid first asks. */
function useQueryReset(query: GalleryQuery, onChange: () => void) {
  const current = useRef(query);
  useEffect(() => {
    if (current.current === query) return;
    current.current = query;
    onChange();
  }, [query, onChange]);
  return current;
}

/** Bumps the tick (every page stale) at most every LIVE_MS while the run hands on more. */
function useLiveTick(handed: number, bump: () => void): void {
  const lastHanded = useRef(handed);
  useEffect(() => {
    if (handed === lastHanded.current) return;
    const timer = setTimeout(() => {
      lastHanded.current = handed;
      bump();
    }, LIVE_MS);
    return () => clearTimeout(timer);
  }, [handed, bump]);
}

const NO_SUMMARY: Summary = { total: 0, matched: 0, fields: [], numeric: [] };

/** The pages of the query fetched so far. A new query starts over; more outputs (the run going
 * on) mark every page stale, and only those in view are fetched again. */
function usePages(query: GalleryQuery, handed: number) {
  const [rows, setRows] = useState<Map<number, GalleryRow[]>>(new Map());
  const [summary, setSummary] = useState<Summary | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  const fetched = useRef(new Map<number, number>());
  const bump = useCallback(() => setTick((t) => t + 1), []);
  const reset = useCallback(() => {
    fetched.current = new Map();
    setRows(new Map());
    setError(null);
    bump();
  }, [bump]);
  const current = useQueryReset(query, reset);
  useLiveTick(handed, bump);
  const load = useCallback(
    (start: number, at: number): void => {
      fetched.current.set(start, at);
      const asked = current.current;
      fetchGalleryPage(asked, start, PAGE).then(
        (page) => {
          if (current.current !== asked) return;
          setRows((old) => new Map(old).set(start, page.rows));
          setSummary({ total: page.total, matched: page.matched, fields: page.fields, numeric: page.numeric });
          setError(null);
        },
        (e: Error) => {
          if (current.current !== asked) return;
          setError(e.message);
          setSummary((s) => (s ? { ...s, matched: 0 } : NO_SUMMARY));
        },
      );
    },
    [current],
  );
  const pages = useMemo<Pages>(
    () => ({
      rows,
      need(first, last) {
        const starts = new Set<number>([Math.floor(first / PAGE) * PAGE]);
        for (let start = Math.floor(first / PAGE) * PAGE; start < last; start += PAGE) starts.add(start);
        for (const start of starts) if (fetched.current.get(start) !== tick) load(start, tick);
      },
    }),
    [rows, tick, load],
  );
  return { pages, summary, error, tick };
}
