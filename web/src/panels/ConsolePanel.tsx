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

export function ConsolePanel() {
  const lines = useConsole((s) => s.lines);
  const dropped = useConsole((s) => s.dropped);
  const [node, setNode] = useState('');
  const [level, setLevel] = useState<Level>('all');
  const [query, setQuery] = useState('');
  const nodes = useMemo(() => [...new Set(lines.map((l) => l.node))].sort(), [lines]);
  const shown = useMemo(() => {
    const q = query.toLowerCase();
    return lines.filter(
      (l) =>
        (!node || l.node === node) &&
        (level === 'all' || l.level === level) &&
        (!q || text(l.message).toLowerCase().includes(q)),
    );
  }, [lines, node, level, query]);
  const [all, setAll] = useState(false);
  const earlier = all ? 0 : Math.max(0, shown.length - SHOWN_LINES);
  const body = useRef<HTMLDivElement>(null);
  const following = useRef(true);
  useEffect(() => {
    const el = body.current;
    if (el && following.current) el.scrollTop = el.scrollHeight;
  }, [shown]);
  // A new run starts with its newest lines again.
  const run = useConsole((s) => s.run);
  useEffect(() => setAll(false), [run]);
  return (
    <section className="gb-console" aria-label="console">
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
          {shown.length} of {lines.length} lines{dropped ? ` · ${dropped.toLocaleString('en')} not kept` : ''}
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
      <div
        className="gb-console-body gb-scroll"
        ref={body}
        onScroll={(e) => {
          const el = e.currentTarget;
          following.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
        }}
      >
        {shown.length ? (
          <ol>
            {earlier ? (
              <li className="gb-console-earlier">
                <button className="gb-link" onClick={() => setAll(true)}>
                  Show the {earlier.toLocaleString('en')} earlier line{earlier === 1 ? '' : 's'}
                </button>
              </li>
            ) : null}
            {(earlier ? shown.slice(earlier) : shown).map((l) => (
              <li key={l.seq} className={`gb-console-line gb-log-${l.level}`} data-node={l.node} data-level={l.level}>
                <button className="gb-link gb-console-node" onClick={() => useUi.getState().inspect(l.node, 'logs')}>
                  {l.node}
                </button>
                <span className="gb-log-level">{l.level}</span>
                <span className="gb-console-text">{text(l.message)}</span>
              </li>
            ))}
          </ol>
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
