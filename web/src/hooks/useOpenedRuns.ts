// The past runs shown over the canvas, fetched from the server: each run's details, and the
// metric curves of those that have any (a search: its trials'). Fetched again when a run of
// this server ends or a workflow file is saved (what changed since a run), and every few seconds
// while one of them is still running (a training run started from a terminal tells the server
// nothing).

import { useEffect, useState } from 'react';
import { fetchMetrics, fetchRunDetails } from '../api/runs';
import type { RunDetails, RunMetrics, RunRecordInfo } from '../protocol';
import { trialsOf } from '../runRecords';
import { useFiles } from '../store/files';
import { useRun } from '../store/run';
import { isActive } from '../store/runState';

const POLL_MS = 3000;
const MAX_CURVES = 50;

export interface OpenedRuns {
  /** `null` until the first answer; in the order asked for. */
  details: RunDetails[] | null;
  /** The curves of the runs that have metrics (a search's trials in its place). */
  metrics: RunMetrics[];
  error: string | null;
}

/** The runs whose curves show for `run`: a search's trials, or the run itself if it has metrics. */
export function curvesOf(run: RunRecordInfo, history: RunRecordInfo[]): string[] {
  if (run.kind === 'search') return trialsOf(run, history).map((r) => r.run_id);
  return run.metrics > 0 ? [run.run_id] : [];
}

export function useOpenedRuns(runIds: string[], history: RunRecordInfo[]): OpenedRuns {
  const moment = useRun((s) => (s.run ? `${s.run.run_id}:${isActive(s.run) ? 'live' : s.run.status}` : ''));
  const saved = useFiles((s) => s.files.map((f) => `${f.path}:${f.modified}`).join(','));
  const [opened, setOpened] = useState<OpenedRuns>({ details: null, metrics: [], error: null });
  const [tick, setTick] = useState(0);
  const key = runIds.join(',');
  const trialsKey = history.map((r) => `${r.run_id}:${r.metrics}`).join(',');
  useEffect(() => setOpened({ details: null, metrics: [], error: null }), [key]);
  useEffect(() => {
    let current = true;
    let timer: number | undefined;
    const load = async (): Promise<void> => {
      const details = await Promise.all(key.split(',').filter(Boolean).map(fetchRunDetails));
      const curves = [...new Set(details.flatMap((d) => curvesOf(d.run, history)))].slice(0, MAX_CURVES);
      const metrics = curves.length ? (await fetchMetrics(curves)).runs : [];
      if (!current) return;
      setOpened({ details, metrics, error: null });
      if (details.some((d) => d.run.status === 'running'))
        timer = window.setTimeout(() => setTick((t) => t + 1), POLL_MS);
    };
    load().catch((error: Error) => current && setOpened((o) => ({ ...o, error: error.message })));
    return () => {
      current = false;
      window.clearTimeout(timer);
    };
    // `history` is a new array on every render; `trialsKey` is the part of it the curves depend on.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, moment, tick, trialsKey, saved]);
  return opened;
}
