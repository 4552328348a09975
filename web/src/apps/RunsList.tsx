// The runs this app made, newest first: when, how each ended, with what inputs; a click opens
// one (its results, and the form filled in with its inputs).

import { useEffect, useState } from 'react';
import { fetchAppRuns } from '../api/apps';
import type { Job } from '../protocol';
import { stateWords } from './RunPanel';

function useRuns(workflow: string, version: number) {
  const [runs, setRuns] = useState<Job[]>([]);
  useEffect(() => {
    let live = true;
    fetchAppRuns(workflow)
      .then((found) => live && setRuns(found.runs))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [workflow, version]);
  return runs;
}

export function RunsList({
  workflow,
  version,
  current,
  onOpen,
}: {
  workflow: string;
  version: number;
  current: string | null;
  onOpen(job: Job): void;
}) {
  const runs = useRuns(workflow, version);
  return (
    <section className="gb-appruns" aria-label="runs of this app">
      <h2>Runs</h2>
      {runs.length === 0 ? <p className="gb-muted">No runs yet.</p> : null}
      <ol>
        {runs.map((job) => (
          <li key={job.id}>
            <button
              className={`gb-apprun-item${job.id === current ? ' gb-apprun-current' : ''}`}
              data-run={job.id}
              onClick={() => onOpen(job)}
            >
              <span className="gb-apprun-when">{new Date(job.created * 1000).toLocaleString()}</span>
              <span className={`gb-apprun-state gb-apprun-${job.state}`}>{stateWords(job)}</span>
              <span className="gb-apprun-inputs gb-mono gb-ellipsis">{inputsText(job.request.inputs ?? {})}</span>
            </button>
          </li>
        ))}
      </ol>
    </section>
  );
}

export function inputsText(inputs: Record<string, unknown>): string {
  return Object.entries(inputs)
    .map(
      ([name, value]) =>
        `${name}=${typeof value === 'string' ? value.split('/').slice(-2).join('/') : JSON.stringify(value)}`,
    )
    .join('  ');
}
