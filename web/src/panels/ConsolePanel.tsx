// The console under the canvas: every log line and error of the run as they came, filtered by
// node, level and text; a click on a line's node shows that node. Follows the newest line.

import { useEffect, useMemo, useRef, useState } from 'react';
import { useConsole } from '../store/console';
import { useUi } from '../store/ui';

const LEVELS = ['all', 'info', 'warning', 'error'] as const;
type Level = (typeof LEVELS)[number];

const text = (message: unknown): string => (typeof message === 'string' ? message : JSON.stringify(message));

/**
 * Lines in the page at once unless asked for all: laying out 2,000 lines on every frame while a
 * run streams made frames of 400 ms (bench/frames.py); the others stay a click away.
 */
export const SHOWN_LINES = 200;

type Line = ReturnType<typeof useConsole.getState>['lines'][number];

interface Filters {
  node: string;
  setNode: (node: string) => void;
  level: Level;
  setLevel: (level: Level) => void;
  query: string;
  setQuery: (query: string) => void;
}

function useFilters(): Filters {
  const [node, setNode] = useState('');
  const [level, setLevel] = useState<Level>('all');
  const [query, setQuery] = useState('');
  return { node, setNode, level, setLevel, query, setQuery };
}

function useShown(lines: Line[], { node, level, query }: Filters): Line[] {
  return useMemo(() => {
    const q = query.toLowerCase();
    return lines.filter(
      (l) =>
        (!node || l.node === node) &&
        (level === 'all' || l.level === level) &&
        (!q || text(l.message).toLowerCase().includes(q)),
    );
  }, [lines, node, level, query]);
}

function ConsoleHead({ lines, shown, filters }: { lines: Line[]; shown: number; filters: Filters }) {
  const dropped = useConsole((s) => s.dropped);
  const nodes = useMemo(() => [...new Set(lines.map((l) => l.node))].sort(), [lines]);
  const { node, setNode, level, setLevel, query, setQuery } = filters;
  return (
    <header className="gb-console-head">
      <strong>Console</strong>
      <select className="gb-input" aria-label="console node" value={node} onChange={(e) => setNode(e.target.value)}>
        <option value="">all nodes</option>
        {nodes.map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
      <select
        className="gb-input"
        aria-label="console level"
        value={level}
        onChange={(e) => setLevel(e.target.value as Level)}
      >
        {LEVELS.map((l) => (
          <option key={l} value={l}>
            {l === 'all' ? 'all levels' : l}
          </option>
        ))}
      </select>
      <input
        className="gb-input"
        aria-label="console filter"
        placeholder="Filter…"
        value={query}
        onChange={(e) => setQuery(e.target.value)}
      />
      <span className="gb-muted gb-console-count">
        {shown} of {lines.length} lines{dropped ? ` · ${dropped.toLocaleString('en')} not kept` : ''}
      </span>
      <button
        className="gb-icon"
        aria-label="hide the console"
        title="Hide the console (`)"
        onClick={() => useUi.getState().togglePanel('console', false)}
      >
        ×
      </button>
    </header>
  );
}

function ConsoleLine({ line }: { line: Line }) {
  return (
    <li className={`gb-console-line gb-log-${line.level}`} data-node={line.node} data-level={line.level}>
      <button className="gb-link gb-console-node" onClick={() => useUi.getState().inspect(line.node, 'logs')}>
        {line.node}
      </button>
      <span className="gb-log-level">{line.level}</span>
      <span className="gb-console-text">{text(line.message)}</span>
    </li>
  );
}

/** Whether to show every line; a new run starts with its newest lines again. */
function useShowAll(): [boolean, (all: boolean) => void] {
  const [all, setAll] = useState(false);
  const run = useConsole((s) => s.run);
  useEffect(() => setAll(false), [run]);
  return [all, setAll];
}

/** The newest SHOWN_LINES lines unless all are asked for, and a button for the earlier ones. */
function ConsoleLines({ shown, all, setAll }: { shown: Line[]; all: boolean; setAll: (all: boolean) => void }) {
  const earlier = all ? 0 : Math.max(0, shown.length - SHOWN_LINES);
  return (
    <ol>
      {earlier ? (
        <li className="gb-console-earlier">
          <button className="gb-link" onClick={() => setAll(true)}>
            Show the {earlier.toLocaleString('en')} earlier line{earlier === 1 ? '' : 's'}
          </button>
        </li>
      ) : null}
      {(earlier ? shown.slice(earlier) : shown).map((l) => (
        <ConsoleLine key={l.seq} line={l} />
      ))}
    </ol>
  );
}

/** Keeps the newest line in view while the reader has not scrolled up. */
function useFollow(shown: Line[]) {
  const body = useRef<HTMLDivElement>(null);
  const following = useRef(true);
  useEffect(() => {
    const el = body.current;
    if (el && following.current) el.scrollTop = el.scrollHeight;
  }, [shown]);
  const onScroll = (el: HTMLDivElement): void => {
    following.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
  };
  return { body, onScroll };
}

export function ConsolePanel() {
  const lines = useConsole((s) => s.lines);
  const filters = useFilters();
  const shown = useShown(lines, filters);
  const { body, onScroll } = useFollow(shown);
  const [all, setAll] = useShowAll();
  return (
    <section className="gb-console" aria-label="console">
      <ConsoleHead lines={lines} shown={shown.length} filters={filters} />
      <div className="gb-console-body gb-scroll" ref={body} onScroll={(e) => onScroll(e.currentTarget)}>
        {shown.length ? (
          <ConsoleLines shown={shown} all={all} setAll={setAll} />
        ) : (
          <p className="gb-empty">
            {lines.length
              ? 'No line matches the filters.'
              : 'Nothing logged yet: run the workflow, and every node’s logs and errors appear here.'}
          </p>
        )}
      </div>
    </section>
  );
}
