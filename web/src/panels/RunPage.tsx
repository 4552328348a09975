// One past run, opened from the Runs tab over the canvas: what each node did (items, time,
// errors, logs), how its workflow changed since, its parameters; a training run's or a
// search's metric curves; and running it again.

import { useState } from 'react';
import { runAgain, runSettings } from '../actions/pastRuns';
import { drawnCurves } from '../charts';
import type { LogEntry, NodeSnapshot, RunDetails, RunMetrics, RunRecordInfo } from '../protocol';
import {
  durationOf,
  exactTime,
  flatParams,
  formatCount,
  formatDuration,
  itemsOf,
  kindLabel,
  nodeCounts,
  outputsText,
  paramText,
  pluralCount,
  previousRun,
  runLabels,
  shortTime,
  statusLabel,
  trainingProgress,
  trialsOf,
} from '../runRecords';
import { usePastRuns } from '../store/pastRuns';
import { timingText } from '../timing';
import { JsonTree } from './JsonTree';
import { MetricCharts } from './MetricCharts';

const STATE_LABELS: Record<string, string> = {
  waiting: 'not run',
  cached: 'reused',
  done: 'done',
  failed: 'failed',
  stopped: 'stopped',
  running: 'running',
};

export function RunFacts({ run, now }: { run: RunRecordInfo; now: number }) {
  const progress = trainingProgress(run);
  return (
    <span className="gb-runpage-facts">
      <span className={`gb-run-badge gb-history-${run.status}`} data-status={run.status}>
        <span className="gb-dot" />
        {statusLabel(run.status)}
      </span>
      {run.kind !== 'workflow' ? <span className="gb-run-kind">{kindLabel(run.kind)}</span> : null}
      {run.kind === 'workflow' && run.mode !== 'all' ? (
        <span className="gb-runpage-mode" title="what the run was asked to run">
          {run.node ? `${run.mode} · ${run.node}` : run.mode}
        </span>
      ) : null}
      <time title={exactTime(run.started)}>{shortTime(run.started)}</time>
      <span title="how long it took">
        {run.ended === null ? 'still running' : formatDuration(durationOf(run, now))}
      </span>
      {run.paused ? (
        <span
          className="gb-runpage-paused"
          title="time the run stood paused or between steps; its duration leaves it out"
        >
          paused {formatDuration(run.paused)}
        </span>
      ) : null}
      {run.kind === 'workflow' ? <span className="gb-runpage-items">{pluralCount(itemsOf(run), 'item')}</span> : null}
      {progress ? <span>{progress}</span> : null}
    </span>
  );
}

function Logs({ node }: { node: NodeSnapshot }) {
  if (!node.logs.length) return <p className="gb-empty">No logs.</p>;
  const line = (entry: LogEntry): string =>
    typeof entry.message === 'string' ? entry.message : JSON.stringify(entry.message);
  return (
    <div className="gb-runpage-logs">
      {node.logs_dropped ? (
        <p className="gb-runpage-note">
          {pluralCount(node.logs_dropped, 'earlier line')} not kept; the last {node.logs.length} below.
        </p>
      ) : null}
      <pre>
        {node.logs.map((entry, i) => (
          <div key={i} className={`gb-log-${entry.level}`}>
            {line(entry)}
          </div>
        ))}
      </pre>
    </div>
  );
}

function NodeMore({ node }: { node: NodeSnapshot }) {
  return (
    <div className="gb-runpage-more">
      {node.errors.map((entry, i) => (
        <details key={i} className="gb-runpage-error" open={i === 0}>
          <summary>
            {entry.error.type}: {entry.error.message}
          </summary>
          {entry.item !== null && entry.item !== undefined ? (
            <div className="gb-runpage-item">
              <span>on</span> <JsonTree value={entry.item} depth={1} />
            </div>
          ) : null}
          <pre>{entry.error.traceback}</pre>
        </details>
      ))}
      {node.reason ? (
        <p className="gb-runpage-note">
          {node.action === 'reuse' ? 'Reused' : 'Why it ran'}: {node.reason}
        </p>
      ) : null}
      {node.timing ? (
        <p className="gb-runpage-note gb-runpage-timing">Where its time went: {timingText(node.timing)}</p>
      ) : null}
      <Logs node={node} />
    </div>
  );
}

function NodeRow({ node, isOpen, toggle }: { node: NodeSnapshot; isOpen: boolean; toggle: () => void }) {
  const logs = node.logs.length + node.logs_dropped;
  return (
    <tr className="gb-runpage-node" onClick={toggle}>
      <td>
        <button
          className="gb-runpage-toggle"
          aria-expanded={isOpen}
          title={isOpen ? 'Hide its logs and errors' : 'Show its logs and errors'}
        >
          <span className="gb-runpage-chevron">{isOpen ? '▾' : '▸'}</span>
          <span className="gb-runpage-title">{node.title}</span>
        </button>
        {node.title !== node.node_id ? <span className="gb-runpage-id">{node.node_id}</span> : null}
      </td>
      <td className={`gb-state-${node.state}`}>{STATE_LABELS[node.state] ?? node.state}</td>
      <td className="gb-num gb-runpage-counts">{outputsText(node.counts)}</td>
      <td className="gb-num">
        {node.state === 'waiting' || node.state === 'cached' ? '—' : formatDuration(node.seconds)}
      </td>
      <td className={`gb-num${node.errors.length ? ' gb-runpage-bad' : ''}`}>
        {node.errors.length ? formatCount(node.errors.length) : '—'}
      </td>
      <td className="gb-num">{logs ? formatCount(logs) : '—'}</td>
    </tr>
  );
}

function NodeTable({ nodes }: { nodes: NodeSnapshot[] }) {
  const [open, setOpen] = useState<string | null>(() => nodes.find((n) => n.errors.length)?.node_id ?? null);
  return (
    <table className="gb-runpage-nodes">
      <thead>
        <tr>
          <th>node</th>
          <th>state</th>
          <th className="gb-num">items out</th>
          <th className="gb-num">time</th>
          <th className="gb-num">errors</th>
          <th className="gb-num">logs</th>
        </tr>
      </thead>
      {nodes.map((node) => {
        const isOpen = open === node.node_id;
        return (
          <tbody key={node.node_id} data-node={node.node_id} className={isOpen ? 'gb-open' : undefined}>
            <NodeRow node={node} isOpen={isOpen} toggle={() => setOpen(isOpen ? null : node.node_id)} />
            {isOpen ? (
              <tr className="gb-runpage-detail">
                <td colSpan={6}>
                  <NodeMore node={node} />
                </td>
              </tr>
            ) : null}
          </tbody>
        );
      })}
    </table>
  );
}

/** Counts per node when the run kept no node details (recorded before they were kept). */
function CountsOnly({ run }: { run: RunRecordInfo }) {
  const counts = nodeCounts(run);
  if (!counts.length) return <p className="gb-empty">No node handed anything on.</p>;
  return (
    <table className="gb-runpage-nodes">
      <thead>
        <tr>
          <th>node</th>
          <th className="gb-num">items out</th>
        </tr>
      </thead>
      <tbody>
        {counts.map(([node, outputs]) => (
          <tr key={node} data-node={node}>
            <td>{node}</td>
            <td className="gb-num gb-runpage-counts">{outputsText(Object.fromEntries(outputs))}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The trial's last validation value of the search's metric, in four figures. */
function lastValue(metrics: RunMetrics[], runId: string, metric: string | null): string {
  const series = metrics
    .find((m) => m.run_id === runId)
    ?.series.find((s) => s.group === 'validation' && s.name === metric);
  const value = series?.values.filter((v) => v !== null).at(-1);
  return value === undefined || value === null ? '—' : String(Number(value.toPrecision(4)));
}

interface TrialRowProps {
  trial: RunRecordInfo;
  label: string | undefined;
  names: string[];
  best: string | null;
  metric: string | null;
  metrics: RunMetrics[];
}

function TrialRow({ trial, label, names, best, metric, metrics }: TrialRowProps) {
  return (
    <tr data-run={trial.run_id} className={trial.run_id === best ? 'gb-runpage-best' : undefined}>
      <td>
        {label}
        {trial.run_id === best ? (
          <span className="gb-runpage-star" title={`the best by ${metric ?? 'its metric'}`}>
            {' '}
            ★ best
          </span>
        ) : null}
      </td>
      <td>{statusLabel(trial.status)}</td>
      {names.map((n) => (
        <td key={n} className="gb-num">
          {paramText(trial.params[n])}
        </td>
      ))}
      {metric ? <td className="gb-num">{lastValue(metrics, trial.run_id, metric)}</td> : null}
    </tr>
  );
}

function Trials({
  search,
  trials,
  metrics,
}: {
  search: RunRecordInfo;
  trials: RunRecordInfo[];
  metrics: RunMetrics[];
}) {
  const names = [...new Set(trials.flatMap((t) => Object.keys(t.params)))].sort();
  const best = typeof search.counts.best_run === 'string' ? search.counts.best_run : null;
  const metric = typeof search.counts.metric === 'string' ? search.counts.metric : null;
  const labels = runLabels(trials);
  if (!trials.length) return <p className="gb-empty">No trial has started yet.</p>;
  return (
    <table className="gb-runpage-nodes gb-runpage-trials">
      <thead>
        <tr>
          <th>trial</th>
          <th>state</th>
          {names.map((n) => (
            <th key={n} className="gb-num">
              {n}
            </th>
          ))}
          {metric ? <th className="gb-num">{metric}</th> : null}
        </tr>
      </thead>
      <tbody>
        {trials.map((trial) => (
          <TrialRow
            key={trial.run_id}
            trial={trial}
            label={labels[trial.run_id]}
            names={names}
            best={best}
            metric={metric}
            metrics={metrics}
          />
        ))}
      </tbody>
    </table>
  );
}

/** The inputs and overrides a run was given (the file's own values stay as they were). */
function GivenForRun({ config }: { config: Record<string, unknown> }) {
  const { overrides, inputs } = runSettings(config);
  const set = Object.entries(overrides ?? {}).flatMap(([node, params]) =>
    Object.entries(params).map(([param, value]) => [`${node}.${param}`, value] as const),
  );
  if (!inputs && !set.length) return null;
  return (
    <section className="gb-runpage-given">
      <h3>Given for this run</h3>
      <table className="gb-runpage-nodes gb-runpage-params">
        <tbody>
          {Object.entries(inputs ?? {}).map(([name, value]) => (
            <tr key={`input ${name}`} data-input={name}>
              <td>input {name}</td>
              <td>{paramText(value)}</td>
            </tr>
          ))}
          {set.map(([name, value]) => (
            <tr key={`set ${name}`} data-override={name}>
              <td>set {name}</td>
              <td>{paramText(value)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function RunActions({ details, history }: { details: RunDetails; history: RunRecordInfo[] }) {
  const { run } = details;
  const show = usePastRuns((s) => s.show);
  const previous = run.kind === 'search' ? undefined : previousRun(run, history);
  return (
    <span className="gb-runpage-actions">
      {previous ? (
        <button
          className="gb-button"
          onClick={() => show([previous.run_id, run.run_id])}
          title={`Side by side with the run of ${run.workflow} before this one`}
        >
          Compare with the previous run
        </button>
      ) : null}
      {details.rerun ? (
        <button
          className="gb-button gb-primary"
          onClick={() => void runAgain(details)}
          title="Run this workflow again with the parameters, inputs and overrides this run had"
        >
          Run again
        </button>
      ) : null}
    </span>
  );
}

function Changes({ details }: { details: RunDetails }) {
  if (!details.changes.length) return null;
  return (
    <div className="gb-banner gb-runpage-changes" role="note">
      <strong>{details.run.workflow} changed since this run.</strong> Run again runs it as it was then, or the file as
      it is now:
      <ul>
        {details.changes.map((change) => (
          <li key={change}>{change}</li>
        ))}
      </ul>
    </div>
  );
}

function ParamsTable({ run }: { run: RunRecordInfo }) {
  if (!Object.keys(run.params).length || run.kind === 'search') return null;
  return (
    <section>
      <h3>{run.kind === 'workflow' ? 'Parameters' : 'Hyperparameters'}</h3>
      <table className="gb-runpage-nodes gb-runpage-params">
        <tbody>
          {Object.entries(flatParams(run)).map(([name, value]) => (
            <tr key={name} data-param={name}>
              <td>{name}</td>
              <td>{paramText(value)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** What the run did: a search's trials, the metric curves, a workflow's nodes. */
function RunBody({
  details,
  metrics,
  trials,
}: {
  details: RunDetails;
  metrics: RunMetrics[];
  trials: RunRecordInfo[];
}) {
  const { run } = details;
  const labels = run.kind === 'search' ? runLabels(trials) : undefined;
  const curves = drawnCurves(metrics, new Set(run.kind === 'workflow' ? [run.run_id] : []));
  return (
    <>
      {run.kind === 'search' ? (
        <section>
          <h3>Trials</h3>
          <Trials search={run} trials={trials} metrics={metrics} />
        </section>
      ) : null}
      {curves.length ? (
        <section>
          <h3>{run.kind === 'search' ? 'Metrics of every trial' : 'Metrics'}</h3>
          <MetricCharts runs={curves} labels={labels} xLabel={run.kind === 'workflow' ? 'steps' : 'batches'} />
        </section>
      ) : null}
      {run.kind === 'workflow' ? (
        <section>
          <h3>Nodes</h3>
          {details.nodes.length ? <NodeTable nodes={details.nodes} /> : <CountsOnly run={run} />}
        </section>
      ) : null}
    </>
  );
}

export function RunPage({
  details,
  metrics,
  history,
  now,
}: {
  details: RunDetails;
  metrics: RunMetrics[];
  history: RunRecordInfo[];
  now: number;
}) {
  const { run } = details;
  return (
    <div className="gb-runpage" data-run={run.run_id} data-kind={run.kind}>
      <header className="gb-runpage-head">
        <h2 className="gb-runpage-name" title={run.workflow}>
          {run.workflow}
        </h2>
        <RunFacts run={run} now={now} />
        <RunActions details={details} history={history} />
      </header>
      <Changes details={details} />
      {run.error ? <pre className="gb-history-error gb-runpage-runerror">{run.error}</pre> : null}
      <RunBody details={details} metrics={metrics} trials={trialsOf(run, history)} />
      {run.kind === 'workflow' ? <GivenForRun config={details.config} /> : null}
      <ParamsTable run={run} />
      {run.kind !== 'workflow' && Object.keys(details.config).length ? (
        <section>
          <h3>Settings</h3>
          <JsonTree value={details.config} depth={1} />
        </section>
      ) : null}
    </div>
  );
}
