// Metric curves of one run or several: a chart per quantity (its training and validation curves
// together, every run's overlaid), losses first.

import { useMemo } from 'react';
import { metricCharts } from '../charts';
import type { RunMetrics } from '../protocol';
import { formatCount } from '../runRecords';
import { LineChart } from '../widgets/LineChart';

export function MetricCharts({
  runs,
  labels,
  xLabel = 'batches',
}: {
  runs: RunMetrics[];
  labels?: Record<string, string>;
  xLabel?: string;
}) {
  const charts = useMemo(() => metricCharts(runs, labels), [runs, labels]);
  if (!charts.length) return <p className="gb-empty">No metrics were reported.</p>;
  return (
    <div className="gb-charts">
      {charts.map((chart) => (
        <LineChart
          key={chart.key}
          title={chart.key}
          lines={chart.lines}
          xLabel={xLabel}
          note={
            chart.dropped ? `${formatCount(chart.dropped)} points not drawn (every k-th kept, and the last)` : undefined
          }
        />
      ))}
    </div>
  );
}
