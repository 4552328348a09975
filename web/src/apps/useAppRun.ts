// A run an app asked for, followed: fetched at once, then again every POLL_MS while it waits or
// runs (its place in the queue, each node's progress), until it has ended (its results).

import { useCallback, useEffect, useState } from 'react';
import { fetchAppRun } from '../api/apps';
import type { AppRun } from '../protocol';

const POLL_MS = 400;
export const ENDED = ['completed', 'failed', 'stopped', 'cancelled', 'interrupted'];

export function useAppRun(job: string | null): { run: AppRun | null; error: string; update(run: AppRun): void } {
  const [run, setRun] = useState<AppRun | null>(null);
  const [error, setError] = useState('');
  const update = useCallback((found: AppRun) => setRun(found), []);
  useEffect(() => {
    setRun(null);
    setError('');
    if (!job) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let live = true;
    const poll = (): void => {
      fetchAppRun(job)
        .then((found) => {
          if (!live) return;
          setRun(found);
          if (!ENDED.includes(found.job.state)) timer = setTimeout(poll, POLL_MS);
        })
        .catch((e: Error) => live && setError(e.message));
    };
    poll();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [job]);
  return { run: run?.job.id === job ? run : null, error, update };
}
