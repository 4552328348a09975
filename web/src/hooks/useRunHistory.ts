// Past runs from the server, fetched again whenever a run starts or ends (any client's run).

import { useEffect, useState } from 'react';
import { fetchRuns } from '../api/runs';
import type { RunRecordInfo } from '../protocol';
import { useRun } from '../store/run';
import { isActive } from '../store/runState';

export interface RunHistory {
  /** `null` until the first answer. */
  runs: RunRecordInfo[] | null;
  error: string | null;
}

export function useRunHistory(): RunHistory {
  const moment = useRun((s) => (s.run ? `${s.run.run_id}:${isActive(s.run) ? 'live' : s.run.status}` : ''));
  const [history, setHistory] = useState<RunHistory>({ runs: null, error: null });
  useEffect(() => {
    let current = true;
    fetchRuns().then(
      (list) => current && setHistory({ runs: list.runs, error: null }),
      (error: Error) => current && setHistory((h) => ({ runs: h.runs, error: error.message })),
    );
    return () => {
      current = false;
    };
  }, [moment]);
  return history;
}
