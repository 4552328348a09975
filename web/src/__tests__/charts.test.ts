// Metric curves as charts: grouping, colours, ticks, numbers, gaps, the nearest point.

import { describe, expect, it } from 'vitest';
import {
  canLog,
  drawnCurves,
  linearTicks,
  logTicks,
  metricCharts,
  nearest,
  pathOf,
  tickText,
  valueText,
} from '../charts';
import type { RunMetrics } from '../protocol';

const run = (run_id: string, loss: (number | null)[], val: number[]): RunMetrics => ({
  run_id,
  name: `search#trial-${run_id}`,
  series: [
    { group: 'training', name: 'loss', steps: loss.map((_, i) => (i + 1) * 10), values: loss, dropped: 0 },
    { group: 'validation', name: 'validation_loss', steps: val.map((_, i) => (i + 1) * 20), values: val, dropped: 0 },
    {
      group: 'validation',
      name: 'accuracy',
      steps: val.map((_, i) => (i + 1) * 20),
      values: val.map(() => 0.5),
      dropped: 3,
    },
  ],
});

describe('metric charts', () => {
  it('put training and validation loss of one run on one chart, losses first, a colour each', () => {
    const charts = metricCharts([run('0', [1, 0.5], [0.8])]);
    expect(charts.map((c) => c.key)).toEqual(['loss', 'accuracy']);
    const [loss] = charts;
    expect(loss?.lines.map((l) => l.label)).toEqual(['training', 'validation']);
    expect(new Set(loss?.lines.map((l) => l.color)).size).toBe(2);
    expect(loss?.lines.every((l) => !l.dashed)).toBe(true);
    expect(charts[1]?.dropped).toBe(3);
  });

  it('overlay several runs: a colour per run, validation dashed, named by the labels given', () => {
    const charts = metricCharts([run('0', [1], [1]), run('1', [2], [2])], { '0': 'trial-0', '1': 'trial-1' });
    const loss = charts[0];
    expect(loss?.lines.map((l) => l.label)).toEqual([
      'trial-0 · training',
      'trial-0 · validation',
      'trial-1 · training',
      'trial-1 · validation',
    ]);
    expect(loss?.lines.map((l) => l.dashed)).toEqual([false, true, false, true]);
    expect(loss?.lines[0]?.color).toBe(loss?.lines[1]?.color);
    expect(loss?.lines[0]?.color).not.toBe(loss?.lines[2]?.color);
    // a chart of one group only names the runs
    expect(charts[1]?.lines.map((l) => l.label)).toEqual(['trial-0', 'trial-1']);
  });

  it("draw a workflow run's reported curves, not the engine's one-point figures; every curve of other runs", () => {
    const workflow: RunMetrics = {
      run_id: 'w',
      name: 'wf.json',
      series: [
        { group: 'train', name: 'loss', steps: [0, 1], values: [1, 0.5], dropped: 0 },
        { group: 'train', name: 'items_out', steps: [2], values: [8], dropped: 0 },
        { group: 'run', name: 'items', steps: [0], values: [8], dropped: 0 },
      ],
    };
    const figuresOnly: RunMetrics = { ...workflow, run_id: 'f', series: workflow.series.slice(1) };
    const drawn = drawnCurves([workflow, figuresOnly, run('t', [1], [1])], new Set(['w', 'f']));
    expect(drawn.map((m) => [m.run_id, m.series.map((s) => s.name)])).toEqual([
      ['w', ['loss']],
      ['t', ['loss', 'validation_loss', 'accuracy']],
    ]);
  });

  it('make round ticks, linear and log', () => {
    expect(linearTicks(0, 1, 5)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(linearTicks(3, 97, 4)).toEqual([20, 40, 60, 80]);
    expect(logTicks(0.001, 10)).toEqual([0.001, 0.01, 0.1, 1, 10]);
    expect(logTicks(0.15, 0.9)).toEqual([0.2, 0.5]);
  });

  it('offer a log scale only when every value is above zero', () => {
    expect(canLog(metricCharts([run('0', [1, 0.5], [0.8])])[0]?.lines ?? [])).toBe(true);
    expect(canLog(metricCharts([run('0', [1, 0], [0.8])])[0]?.lines ?? [])).toBe(false);
  });

  it('write ticks and values short', () => {
    expect([
      tickText(0),
      tickText(0.25),
      tickText(1500),
      tickText(12000),
      tickText(2_500_000),
      tickText(0.0001),
    ]).toEqual(['0', '0.25', '1500', '12k', '2.5M', '1e-4']);
    expect([valueText(0.123456), valueText(null), valueText(0.00001234)]).toEqual(['0.1235', '—', '1.234e-5']);
  });

  it('leave a gap where a value is missing, and find the nearest point with a value', () => {
    const points = [
      { x: 0, y: 1 },
      { x: 10, y: null },
      { x: 20, y: 3 },
    ];
    expect(
      pathOf(
        points,
        (x) => x,
        (y) => y,
      ),
    ).toBe('M0.0,1.0M20.0,3.0');
    expect(nearest(points, 9)).toBe(0);
    expect(nearest(points, 16)).toBe(2);
  });
});
