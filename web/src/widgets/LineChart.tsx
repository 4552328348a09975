// A line chart in SVG: axes with round ticks, one path per line (gaps where a value is
// missing), a legend whose entries hide and show their line, the values under the pointer, and
// a log scale for quantities above zero (a loss). Sized to its container's width.

import { type PointerEvent, useEffect, useMemo, useRef, useState } from 'react';
import {
  type Line,
  canLog,
  extent,
  linearTicks,
  logTicks,
  nearest,
  pathOf,
  tickText,
  valueText,
  valuesOf,
} from '../charts';
import { useToggleSet } from '../hooks/useToggleSet';

const HEIGHT = 220;
const MARGIN = { left: 52, right: 14, top: 10, bottom: 34 };

export interface LineChartProps {
  title: string;
  lines: Line[];
  /** What x counts (the axis label): "batches". */
  xLabel: string;
  /** Start on a log scale (when every value is above 0). */
  log?: boolean;
  /** A note under the chart (points left out, ...). */
  note?: string;
}

function useWidth(): [React.RefObject<HTMLDivElement | null>, number] {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(480);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    const observer = new ResizeObserver(() => setWidth(Math.max(200, element.clientWidth)));
    observer.observe(element);
    setWidth(Math.max(200, element.clientWidth));
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}

interface Scales {
  sx: (x: number) => number;
  sy: (y: number) => number;
  xTicks: number[];
  yTicks: number[];
  x0: number;
  x1: number;
}

type YScale = Pick<Scales, 'sy' | 'yTicks'>;

function logScale(yLo: number, yHi: number, plotH: number): YScale {
  const [lo, hi] = [Math.log10(yLo), Math.log10(yHi)];
  const sy = (y: number): number => (y > 0 ? MARGIN.top + (1 - (Math.log10(y) - lo) / (hi - lo || 1)) * plotH : NaN);
  return { sy, yTicks: logTicks(yLo, yHi) };
}

function linearScale(yLo: number, yHi: number, plotH: number): YScale {
  const pad = (yHi - yLo) * 0.05; // room above and below the curves
  const [lo, hi] = [yLo - pad, yHi + pad];
  const sy = (y: number): number => MARGIN.top + (1 - (y - lo) / (hi - lo)) * plotH;
  return { sy, yTicks: linearTicks(lo, hi, 5) };
}

function scales(lines: Line[], width: number, log: boolean): Scales {
  const xs = lines.flatMap((l) => l.points.map((p) => p.x));
  const [x0, x1] = xs.length ? [Math.min(...xs), Math.max(...xs)] : [0, 1];
  const [xLo, xHi] = x0 === x1 ? [x0 - 1, x1 + 1] : [x0, x1];
  const [yLo, yHi] = extent(valuesOf(lines, log));
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const sx = (x: number): number => MARGIN.left + ((x - xLo) / (xHi - xLo)) * plotW;
  const y = log ? logScale(yLo, yHi, plotH) : linearScale(yLo, yHi, plotH);
  return { sx, ...y, xTicks: linearTicks(xLo, xHi, Math.max(2, Math.floor(plotW / 90))), x0: xLo, x1: xHi };
}

const BOTTOM = HEIGHT - MARGIN.bottom;

interface Mark {
  line: Line;
  point: Line['points'][number] | undefined;
}

function marksAt(shown: Line[], hover: number | null): Mark[] {
  if (hover === null) return [];
  return shown
    .map((line) => ({ line, point: line.points[nearest(line.points, hover)] }))
    .filter((m) => m.point && m.point.y !== null);
}

function ChartHead({
  title,
  loggable,
  log,
  onLog,
}: {
  title: string;
  loggable: boolean;
  log: boolean;
  onLog: () => void;
}) {
  return (
    <figcaption className="gb-chart-head">
      <span className="gb-chart-title">{title}</span>
      {loggable ? (
        <button className="gb-chart-log" aria-pressed={log} title="Show the y axis on a log scale" onClick={onLog}>
          log scale
        </button>
      ) : null}
    </figcaption>
  );
}

function YAxis({ scale, plotW }: { scale: Scales; plotW: number }) {
  const { sy, yTicks } = scale;
  return (
    <>
      <g className="gb-chart-grid">
        {yTicks.map((t) => (
          <line key={`y${t}`} x1={MARGIN.left} x2={MARGIN.left + plotW} y1={sy(t)} y2={sy(t)} />
        ))}
      </g>
      <g className="gb-chart-axis gb-chart-y">
        {yTicks.map((t) => (
          <text key={t} x={MARGIN.left - 6} y={sy(t)} dy="0.32em" textAnchor="end">
            {tickText(t)}
          </text>
        ))}
      </g>
    </>
  );
}

function XAxis({ scale, plotW, xLabel }: { scale: Scales; plotW: number; xLabel: string }) {
  const { sx, xTicks } = scale;
  return (
    <g className="gb-chart-axis gb-chart-x">
      <line x1={MARGIN.left} x2={MARGIN.left + plotW} y1={BOTTOM} y2={BOTTOM} />
      {xTicks.map((t) => (
        <g key={t}>
          <line x1={sx(t)} x2={sx(t)} y1={BOTTOM} y2={BOTTOM + 4} />
          <text x={sx(t)} y={BOTTOM + 16} textAnchor="middle">
            {tickText(t)}
          </text>
        </g>
      ))}
      <text className="gb-chart-xlabel" x={MARGIN.left + plotW} y={HEIGHT - 2} textAnchor="end">
        {xLabel}
      </text>
    </g>
  );
}

function Curve({ line, scale }: { line: Line; scale: Scales }) {
  const { sx, sy } = scale;
  const only = line.points.filter((p) => p.y !== null);
  return (
    <g data-line={line.id} data-points={only.length}>
      <path
        d={pathOf(line.points, sx, sy)}
        fill="none"
        stroke={line.color}
        strokeWidth={1.8}
        strokeDasharray={line.dashed ? '6 4' : undefined}
        strokeLinejoin="round"
      />
      {only.length === 1 && only[0] ? (
        <circle cx={sx(only[0].x)} cy={sy(only[0].y as number)} r={3} fill={line.color} />
      ) : null}
    </g>
  );
}

function HoverMarks({ step, marks, scale }: { step: number; marks: Mark[]; scale: Scales }) {
  const { sx, sy } = scale;
  return (
    <g className="gb-chart-hover">
      <line x1={sx(step)} x2={sx(step)} y1={MARGIN.top} y2={BOTTOM} />
      {marks.map(({ line, point }) =>
        point ? <circle key={line.id} cx={sx(point.x)} cy={sy(point.y as number)} r={3.5} fill={line.color} /> : null,
      )}
    </g>
  );
}

interface TipProps {
  step: number;
  marks: Mark[];
  left: number;
  width: number;
  xLabel: string;
}

function Tip({ step, marks, left, width, xLabel }: TipProps) {
  return (
    <div className={`gb-chart-tip${left > width / 2 ? ' gb-chart-tip-left' : ''}`} style={{ left }} role="status">
      <div className="gb-chart-tip-step">
        {xLabel} {step.toLocaleString('en-US')}
      </div>
      {marks.map(({ line, point }) => (
        <div key={line.id} className="gb-chart-tip-row">
          <span className="gb-chart-swatch" style={{ background: line.color }} />
          <span className="gb-chart-tip-label">{line.label}</span>
          <span className="gb-chart-tip-value">{valueText(point?.y ?? null)}</span>
        </div>
      ))}
    </div>
  );
}

function Legend({
  lines,
  hidden,
  toggle,
}: {
  lines: Line[];
  hidden: ReadonlySet<string>;
  toggle: (id: string) => void;
}) {
  return (
    <div className="gb-chart-legend">
      {lines.map((line) => (
        <button
          key={line.id}
          data-line={line.id}
          aria-pressed={!hidden.has(line.id)}
          title={hidden.has(line.id) ? 'Show this curve' : 'Hide this curve'}
          onClick={() => toggle(line.id)}
        >
          <span
            className={`gb-chart-swatch${line.dashed ? ' gb-chart-dashed' : ''}`}
            style={{ background: line.dashed ? undefined : line.color, borderColor: line.color }}
          />
          {line.label}
        </button>
      ))}
    </div>
  );
}

interface PlotProps {
  title: string;
  xLabel: string;
  width: number;
  scale: Scales;
  shown: Line[];
}

function Plot({ title, xLabel, width, scale, shown }: PlotProps) {
  const [hover, setHover] = useState<number | null>(null);
  const plotW = width - MARGIN.left - MARGIN.right;
  const onMove = (event: PointerEvent<SVGRectElement>): void => {
    const box = event.currentTarget.getBoundingClientRect();
    const fraction = Math.min(1, Math.max(0, (event.clientX - box.left) / box.width));
    setHover(scale.x0 + fraction * (scale.x1 - scale.x0));
  };
  const marks = marksAt(shown, hover);
  const step = marks[0]?.point?.x;
  return (
    <>
      <svg width={width} height={HEIGHT} role="img" aria-label={`${title} against ${xLabel}`}>
        <YAxis scale={scale} plotW={plotW} />
        <XAxis scale={scale} plotW={plotW} xLabel={xLabel} />
        {shown.map((line) => (
          <Curve key={line.id} line={line} scale={scale} />
        ))}
        {step !== undefined ? <HoverMarks step={step} marks={marks} scale={scale} /> : null}
        <rect
          className="gb-chart-catch"
          x={MARGIN.left}
          y={MARGIN.top}
          width={Math.max(0, plotW)}
          height={BOTTOM - MARGIN.top}
          fill="transparent"
          onPointerMove={onMove}
          onPointerLeave={() => setHover(null)}
        />
      </svg>
      {step !== undefined ? (
        <Tip step={step} marks={marks} left={scale.sx(step)} width={width} xLabel={xLabel} />
      ) : null}
    </>
  );
}

export function LineChart({ title, lines, xLabel, log: startLog = false, note }: LineChartProps) {
  const [ref, width] = useWidth();
  const [hidden, toggle] = useToggleSet<string>();
  const shown = useMemo(() => lines.filter((l) => !hidden.has(l.id)), [lines, hidden]);
  const loggable = canLog(shown.length ? shown : lines);
  const [wantLog, setLog] = useState(startLog);
  const log = wantLog && loggable;
  const scale = useMemo(() => scales(shown.length ? shown : lines, width, log), [shown, lines, width, log]);
  return (
    <figure className="gb-chart" data-chart={title} data-scale={log ? 'log' : 'linear'}>
      <ChartHead title={title} loggable={loggable} log={log} onLog={() => setLog(!wantLog)} />
      <div className="gb-chart-plot" ref={ref}>
        <Plot title={title} xLabel={xLabel} width={width} scale={scale} shown={shown} />
      </div>
      <Legend lines={lines} hidden={hidden} toggle={toggle} />
      {note ? <p className="gb-chart-note">{note}</p> : null}
    </figure>
  );
}
