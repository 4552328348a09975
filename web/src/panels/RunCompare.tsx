// Two or more past runs side by side: status, time and items, each node's items, time and
// errors, the parameters that differ, the errors, and their metric curves overlaid.

import type { ReactNode } from 'react';
import type { NodeSnapshot, RunDetails, RunMetrics, RunRecordInfo } from '../protocol';
import {
  differingParams,
  formatDuration,
  nodeCounts,
  outputsText,
  paramText,
  pluralCount,
  runLabels,
} from '../runRecords';
import { drawnCurves } from '../charts';
import { MetricCharts } from './MetricCharts';
import { RunFacts } from './RunPage';

interface Cell {
  counts: Record<string, number>;
  seconds: number | null;
  errors: number;
  reused: boolean;
}

/** Each node's figures per run: from what the run kept of its nodes, else its counts alone. */
function nodeCells(runs: RunDetails[]): [node: string, cells: (Cell | null)[]][] {
  const perRun = runs.map((d) => {
    const byNode = new Map<string, Cell>();
    if (d.nodes.length)
      d.nodes.forEach((n: NodeSnapshot) =>
        byNode.set(n.node_id, {
          counts: n.counts,
          seconds: n.state === 'waiting' || n.state === 'cached' ? null : n.seconds,
          errors: n.errors.length,
          reused: n.state === 'cached',
        }),
      );
    else
      nodeCounts(d.run).forEach(([node, outputs]) =>
        byNode.set(node, { counts: Object.fromEntries(outputs), seconds: null, errors: 0, reused: false }),
      );
    return byNode;
  });
  const names = [...new Set(perRun.flatMap((m) => [...m.keys()]))];
  return names.map((name) => [name, perRun.map((m) => m.get(name) ?? null)]);
}

type Columns = { gridTemplateColumns: string };

/** One row of a comparison grid: its name, then one cell per run. */
function CompareRow({ name, data, children }: { name: string; data: Record<string, string>; children: ReactNode }) {
  return (
    <div className="gb-compare-row" role="row" {...data}>
      <span className="gb-compare-label" role="rowheader" title={name}>
        {name}
      </span>
      {children}
    </div>
  );
}

function NodeCell({ cell }: { cell: Cell | null }) {
  return (
    <span className="gb-compare-cell" role="cell">
      {cell ? (
        <>
          <span className="gb-compare-counts">{outputsText(cell.counts)}</span>
          <span className="gb-compare-seconds">
            {cell.reused ? 'reused' : cell.seconds === null ? '' : formatDuration(cell.seconds)}
          </span>
          {cell.errors ? <span className="gb-runpage-bad">{pluralCount(cell.errors, 'error')}</span> : null}
        </>
      ) : (
        <span className="gb-muted">not in this run</span>
      )}
    </span>
  );
}

function NodesCompared({ runs, columns }: { runs: RunDetails[]; columns: Columns }) {
  const nodes = nodeCells(runs);
  if (!nodes.length) return null;
  return (
    <section>
      <h3>Nodes: items out, time, errors</h3>
      <div className="gb-compare-grid gb-compare-nodes" style={columns} role="table" aria-label="nodes compared">
        {nodes.map(([node, cells]) => (
          <CompareRow key={node} name={node} data={{ 'data-node': node }}>
            {cells.map((cell, i) => (
              <NodeCell key={i} cell={cell} />
            ))}
          </CompareRow>
        ))}
      </div>
    </section>
  );
}

function ParamsCompared({ records, columns }: { records: RunRecordInfo[]; columns: Columns }) {
  const params = differingParams(records);
  return (
    <section>
      <h3>Parameters that differ</h3>
      {params.length ? (
        <div
          className="gb-compare-grid gb-compare-params"
          style={columns}
          role="table"
          aria-label="parameters that differ"
        >
          {params.map(([name, values]) => (
            <CompareRow key={name} name={name} data={{ 'data-param': name }}>
              {values.map((value, i) => (
                <span key={i} className="gb-compare-cell gb-compare-value" role="cell" title={paramText(value)}>
                  {paramText(value)}
                </span>
              ))}
            </CompareRow>
          ))}
        </div>
      ) : (
        <p className="gb-empty">The runs had the same parameters.</p>
      )}
    </section>
  );
}

function ErrorsCompared({ runs, labels }: { runs: RunDetails[]; labels: Record<string, string> }) {
  const failing = runs.filter((d) => d.run.error || d.nodes.some((n) => n.errors.length));
  if (!failing.length) return null;
  return (
    <section>
      <h3>Errors</h3>
      {failing.map((d) => (
        <div key={d.run.run_id} className="gb-compare-errors" data-run={d.run.run_id}>
          <strong>{labels[d.run.run_id]}</strong>
          {d.run.error ? <pre className="gb-history-error">{d.run.error}</pre> : null}
        </div>
      ))}
    </section>
  );
}

interface RunsProps {
  records: RunRecordInfo[];
  labels: Record<string, string>;
  columns: Columns;
  now: number;
}

function RunsCompared({ records, labels, columns, now }: RunsProps) {
  return (
    <div className="gb-compare-grid gb-compare-runs" style={columns} role="table" aria-label="runs compared">
      <span className="gb-compare-corner" />
      {records.map((run) => (
        <div key={run.run_id} className="gb-compare-run" data-run={run.run_id} role="columnheader">
          <strong title={run.workflow}>{labels[run.run_id]}</strong>
          <RunFacts run={run} now={now} />
        </div>
      ))}
    </div>
  );
}

export function RunCompare({ runs, metrics, now }: { runs: RunDetails[]; metrics: RunMetrics[]; now: number }) {
  const records = runs.map((d) => d.run);
  const labels = runLabels(records);
  const workflows = new Set(records.filter((r) => r.kind === 'workflow').map((r) => r.run_id));
  const curves = drawnCurves(metrics, workflows);
  const columns = { gridTemplateColumns: `minmax(120px, 200px) repeat(${runs.length}, minmax(150px, 1fr))` };
  return (
    <div className="gb-runpage gb-compare" data-runs={records.map((r) => r.run_id).join(',')}>
      <header className="gb-runpage-head">
        <h2 className="gb-runpage-name">Comparing {runs.length} runs</h2>
      </header>
      <RunsCompared records={records} labels={labels} columns={columns} now={now} />
      <NodesCompared runs={runs} columns={columns} />
      <ParamsCompared records={records} columns={columns} />
      <ErrorsCompared runs={runs} labels={labels} />
      {curves.length ? (
        <section>
          <h3>Metrics</h3>
          <MetricCharts runs={curves} labels={labels} xLabel={workflows.size === runs.length ? 'steps' : 'batches'} />
        </section>
      ) : null}
    </div>
  );
}
