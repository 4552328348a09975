// The server machine at a glance: CPU, memory, GPUs, the output cache and the worker pool,
// polled while it is shown. Every row is there from the start, so nothing moves when numbers come.

import { useSystemStats } from '../hooks/useSystemStats';
import type { KindStats } from '../protocol';
import { formatBytes, fraction } from '../runRecords';

function Meter({ label, share, text, title }: { label: string; share: number | null; text: string; title?: string }) {
  return (
    <div className="gb-system-row" data-stat={label} title={title}>
      <span className="gb-system-label">{label}</span>
      <span className="gb-system-meter" aria-hidden="true">
        <span style={{ width: `${Math.round((share ?? 0) * 100)}%` }} />
      </span>
      <span className="gb-system-value">{text}</span>
    </div>
  );
}

function Fact({ label, text, title }: { label: string; text: string; title?: string }) {
  return (
    <div className="gb-system-row gb-system-fact" data-stat={label} title={title}>
      <span className="gb-system-label">{label}</span>
      <span className="gb-system-value">{text}</span>
    </div>
  );
}

const queue = (k: KindStats): string => `${k.waiting} waiting · ${k.running} running`;
const DASH = '–';

export function SystemPanel() {
  const stats = useSystemStats();
  const pool = stats?.pool ?? null;
  const memory = stats ? `${formatBytes(stats.memory_used)} / ${formatBytes(stats.memory_total)}` : DASH;
  const cache = stats ? `${formatBytes(stats.cache.used_bytes)} / ${formatBytes(stats.cache.budget_bytes)}` : DASH;
  return (
    <section className="gb-system" aria-label="system">
      <h3 className="gb-system-title">System</h3>
      <Meter
        label="CPU"
        share={stats ? stats.cpu_percent / 100 : null}
        text={stats ? `${Math.round(stats.cpu_percent)}%` : DASH}
      />
      <Meter label="Memory" share={stats ? fraction(stats.memory_used, stats.memory_total) : null} text={memory} />
      {stats?.gpus.map((gpu) => (
        <Meter
          key={gpu.index}
          label={`GPU ${gpu.index}`}
          title={gpu.name}
          share={fraction(gpu.memory_used, gpu.memory_total)}
          text={`${formatBytes(gpu.memory_used)} / ${formatBytes(gpu.memory_total)}`}
        />
      ))}
      <Meter
        label="Cache"
        title={stats ? `${stats.cache.entries} cached outputs` : undefined}
        share={stats ? fraction(stats.cache.used_bytes, stats.cache.budget_bytes) : null}
        text={cache}
      />
      <Fact
        label="Workers"
        text={!stats ? DASH : pool ? String(pool.workers) : 'inline'}
        title={pool ? undefined : 'load and dump functions run in the server process (--workers 0)'}
      />
      {pool ? (
        <>
          <Fact label="Load" text={queue(pool.load)} title="load_fn tasks in the worker pool" />
          <Fact label="Dump" text={queue(pool.dump)} title="dump_fn tasks in the worker pool" />
        </>
      ) : null}
    </section>
  );
}
