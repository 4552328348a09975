// The Runs tab: past runs of every kind, newest first (a search's trials under it); a click
// opens one over the canvas, ticking two or more compares them; the system stats below.

import { useState } from 'react';
import { useNow } from '../hooks/useNow';
import { useRunHistory } from '../hooks/useRunHistory';
import type { RunRecordInfo } from '../protocol';
import {
  durationOf,
  exactTime,
  formatDuration,
  itemsOf,
  kindLabel,
  pluralCount,
  relativeTime,
  statusLabel,
  trainingProgress,
  trialsOf,
} from '../runRecords';
import { usePastRuns } from '../store/pastRuns';
import { SystemPanel } from './SystemPanel';
import '../styles/history.css';

/** What went through a run, in a few words: items for a workflow, batches for training, trials for a search. */
function amountOf(run: RunRecordInfo, trials: number): string {
  if (run.kind === 'search') return pluralCount(trials, 'trial');
  if (run.kind === 'workflow') return pluralCount(itemsOf(run), 'item');
  return trainingProgress(run)?.split(' · ')[0] ?? (run.metrics ? pluralCount(run.metrics, 'metric row') : '');
}

interface RowProps {
  run: RunRecordInfo;
  now: number;
  trials: RunRecordInfo[];
  nested?: boolean;
}

function trialName(run: RunRecordInfo, nested: boolean): string {
  return nested && run.workflow.includes('#trial-')
    ? `trial-${run.workflow.split('#trial-').at(-1) ?? ''}`
    : run.workflow;
}

/** When the run started and how long it took (so far). */
function RunTimes({ run, now }: { run: RunRecordInfo; now: number }) {
  return (
    <>
      <time dateTime={new Date(run.started * 1000).toISOString()} title={exactTime(run.started)}>
        {relativeTime(run.started, now)}
      </time>
      <span aria-hidden="true">·</span>
      <span className="gb-history-duration" title="how long it took">
        {run.ended === null ? '…' : formatDuration(durationOf(run, now))}
      </span>
    </>
  );
}

/** The button that opens the run: its name and amount, status, kind and times. */
function RunButton({ run, now, name, trials }: { run: RunRecordInfo; now: number; name: string; trials: number }) {
  const shown = usePastRuns((s) => s.open.includes(run.run_id));
  const show = usePastRuns((s) => s.show);
  return (
    <button
      className="gb-history-row"
      aria-current={shown ? 'true' : undefined}
      onClick={() => show([run.run_id])}
      title="Open this run"
    >
      <span className="gb-history-line">
        <span className="gb-dot" />
        <span className="gb-history-name gb-ellipsis" title={run.workflow}>
          {name}
        </span>
        <span
          className="gb-history-items"
          title={run.kind === 'workflow' ? 'the most items any node handed on' : undefined}
        >
          {amountOf(run, trials)}
        </span>
      </span>
      <span className="gb-history-meta">
        <span className="gb-history-status">{statusLabel(run.status)}</span>
        {run.kind !== 'workflow' ? <span className="gb-history-kind">{kindLabel(run.kind)}</span> : null}
        <span aria-hidden="true">·</span>
        <RunTimes run={run} now={now} />
      </span>
    </button>
  );
}

function PickBox({ run, name }: { run: RunRecordInfo; name: string }) {
  const picked = usePastRuns((s) => s.picked.includes(run.run_id));
  const pick = usePastRuns((s) => s.pick);
  return (
    <input
      type="checkbox"
      className="gb-history-pick"
      checked={picked}
      onChange={(e) => pick(run.run_id, e.target.checked)}
      aria-label={`pick ${name} to compare`}
      title="Tick two or more runs to compare them"
    />
  );
}

function FoldButton({ unfolded, setUnfolded }: { unfolded: boolean; setUnfolded: (unfolded: boolean) => void }) {
  return (
    <button
      className="gb-history-fold"
      aria-expanded={unfolded}
      aria-label={unfolded ? 'hide the trials' : 'show the trials'}
      onClick={() => setUnfolded(!unfolded)}
    >
      {unfolded ? '▾' : '▸'}
    </button>
  );
}

function RunRow({ run, now, trials, nested = false }: RowProps) {
  const shown = usePastRuns((s) => s.open.includes(run.run_id));
  const [unfolded, setUnfolded] = useState(false);
  const name = trialName(run, nested);
  return (
    <li
      className={`gb-history-run gb-history-${run.status}${shown ? ' gb-open' : ''}${nested ? ' gb-history-trial' : ''}`}
      data-run={run.run_id}
      data-status={run.status}
      data-kind={run.kind}
    >
      <div className="gb-history-head">
        <PickBox run={run} name={name} />
        <RunButton run={run} now={now} name={name} trials={trials.length} />
        {trials.length ? <FoldButton unfolded={unfolded} setUnfolded={setUnfolded} /> : null}
      </div>
      {unfolded && trials.length ? (
        <ul className="gb-history-trials">
          {trials.map((trial) => (
            <RunRow key={trial.run_id} run={trial} now={now} trials={[]} nested />
          ))}
        </ul>
      ) : null}
    </li>
  );
}

function CompareBar() {
  const picked = usePastRuns((s) => s.picked);
  const show = usePastRuns((s) => s.show);
  const pick = usePastRuns((s) => s.pick);
  if (!picked.length) return null;
  return (
    <div className="gb-history-compare">
      <button
        className="gb-button gb-primary"
        disabled={picked.length < 2}
        onClick={() => show(picked)}
        title={picked.length < 2 ? 'Tick one more run' : 'Show the ticked runs side by side'}
      >
        Compare {picked.length}
      </button>
      <button className="gb-button" onClick={() => picked.forEach((id) => pick(id, false))}>
        Clear
      </button>
      {picked.length < 2 ? <span className="gb-muted">tick one more</span> : null}
    </div>
  );
}

export function HistoryPanel() {
  const { runs, error } = useRunHistory();
  const now = useNow(15_000);
  const all = runs ?? [];
  const ids = new Set(all.map((r) => r.run_id));
  const top = all.filter((r) => !r.search || !ids.has(r.search));
  return (
    <div className="gb-history">
      {error ? <div className="gb-banner gb-banner-error">{error}</div> : null}
      <CompareBar />
      <ul className="gb-scroll gb-history-list" aria-label="past runs">
        {top.map((run) => (
          <RunRow key={run.run_id} run={run} now={now} trials={trialsOf(run, all)} />
        ))}
        {runs && !runs.length ? (
          <li className="gb-empty gb-history-empty">
            No runs yet. Each run of a workflow appears here with its status, when it started, how long it took and how
            many items went through it; training runs and searches (graphbook train) with their metric curves.
          </li>
        ) : null}
      </ul>
      <SystemPanel />
    </div>
  );
}
