// The Runs tab: past runs, newest first, each opening to its counts per node, its error and
// what it was asked to do; the system stats below.

import { useState } from 'react';
import { useNow } from '../hooks/useNow';
import { useRunHistory } from '../hooks/useRunHistory';
import type { RunRecordInfo } from '../protocol';
import { durationOf, exactTime, formatDuration, itemsOf, nodeCounts, plural, relativeTime, shortTime, statusLabel } from '../runRecords';
import { JsonTree } from './JsonTree';
import { SystemPanel } from './SystemPanel';
import '../styles/history.css';

function RunDetails({ run }: { run: RunRecordInfo }) {
  const counts = nodeCounts(run);
  return (
    <div className="gb-history-details">
      <dl className="gb-history-facts">
        <dt>mode</dt>
        <dd>{run.node ? `${run.mode} · ${run.node}` : run.mode}</dd>
        <dt>started</dt>
        <dd title={exactTime(run.started)}>{shortTime(run.started)}</dd>
        <dt>ended</dt>
        <dd title={run.ended ? exactTime(run.ended) : undefined}>{run.ended ? shortTime(run.ended) : '—'}</dd>
        {run.paused ? (
          <>
            <dt>paused</dt>
            <dd title="time the run stood paused or between steps; its duration leaves it out">{formatDuration(run.paused)}</dd>
          </>
        ) : null}
      </dl>
      {run.error ? <pre className="gb-history-error">{run.error}</pre> : null}
      {counts.length ? (
        <table className="gb-history-counts">
          <thead>
            <tr>
              <th>node</th>
              <th>items out</th>
            </tr>
          </thead>
          <tbody>
            {counts.map(([node, outputs]) => (
              <tr key={node} data-node={node}>
                <td className="gb-ellipsis" title={node}>{node}</td>
                <td>{outputs.length ? outputs.map(([name, n]) => (outputs.length === 1 && name === 'out' ? `${n}` : `${name} ${n}`)).join(' · ') : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="gb-empty">No node handed anything on.</p>
      )}
      {Object.keys(run.params).length ? (
        <details className="gb-history-params">
          <summary>parameters</summary>
          <JsonTree value={run.params} depth={1} />
        </details>
      ) : null}
    </div>
  );
}

function RunRow({ run, now, open, toggle }: { run: RunRecordInfo; now: number; open: boolean; toggle(): void }) {
  const items = itemsOf(run);
  return (
    <li className={`gb-history-run gb-history-${run.status}${open ? ' gb-open' : ''}`} data-run={run.run_id} data-status={run.status}>
      <button className="gb-history-row" aria-expanded={open} onClick={toggle}>
        <span className="gb-history-line">
          <span className="gb-dot" />
          <span className="gb-history-name gb-ellipsis" title={run.workflow}>{run.workflow}</span>
          <span className="gb-history-duration">{run.ended === null ? '…' : formatDuration(durationOf(run, now))}</span>
        </span>
        <span className="gb-history-meta">
          <span className="gb-history-status">{statusLabel(run.status)}</span>
          <span aria-hidden="true">·</span>
          <time dateTime={new Date(run.started * 1000).toISOString()} title={exactTime(run.started)}>{relativeTime(run.started, now)}</time>
          <span aria-hidden="true">·</span>
          <span className="gb-history-items" title="the most items any node handed on">{plural(items, 'item')}</span>
        </span>
      </button>
      {open ? <RunDetails run={run} /> : null}
    </li>
  );
}

export function HistoryPanel() {
  const { runs, error } = useRunHistory();
  const now = useNow(15_000);
  const [open, setOpen] = useState<string | null>(null);
  return (
    <div className="gb-history">
      {error ? <div className="gb-banner gb-banner-error">{error}</div> : null}
      <ul className="gb-scroll gb-history-list" aria-label="past runs">
        {(runs ?? []).map((run) => (
          <RunRow key={run.run_id} run={run} now={now} open={open === run.run_id} toggle={() => setOpen(open === run.run_id ? null : run.run_id)} />
        ))}
        {runs && !runs.length ? (
          <li className="gb-empty gb-history-empty">No runs yet. Each run of a workflow appears here with its status, when it started, how long it took and how many items went through it.</li>
        ) : null}
      </ul>
      <SystemPanel />
    </div>
  );
}
