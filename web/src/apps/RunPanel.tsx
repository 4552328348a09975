// One run of the app: where it stands (its place in the queue, each node's progress while it
// runs, how it ended), Stop, the link that shares it, and its results once it has ended.

import { stopAppRun } from '../api/apps';
import type { AppRun, AppStage, Job } from '../protocol';
import { Results } from './Results';
import { ENDED } from './useAppRun';

export function RunPanel({ run, onChange }: { run: AppRun; onChange(run: AppRun): void }) {
  const { job } = run;
  const ended = ENDED.includes(job.state);
  return (
    <div className="gb-apprun" data-job={job.id} data-state={job.state}>
      <div className="gb-apprun-head">
        <span className={`gb-apprun-state gb-apprun-${job.state}`} data-run-state={job.state}>
          {stateWords(job)}
        </span>
        <span className="gb-spacer" />
        {!ended ? (
          <button className="gb-button" onClick={() => void stopAppRun(job.id).then(onChange)}>
            {job.state === 'queued' ? 'Cancel' : 'Stop'}
          </button>
        ) : null}
      </div>
      {job.error && job.state !== 'completed' ? <div className="gb-banner gb-banner-error">{job.error}</div> : null}
      {!ended && run.stages.length ? <Stages stages={run.stages} /> : null}
      <ShareLink link={run.link} />
      {ended ? <Results run={run} /> : null}
    </div>
  );
}

/** The run's state in words: its place while it waits, its time once it ended. */
export function stateWords(job: Job): string {
  if (job.state === 'queued') {
    const ahead = job.position ?? 0;
    return ahead === 0 ? 'Waiting: next in line' : `Waiting: ${ahead} run${ahead === 1 ? '' : 's'} before it`;
  }
  if (job.state === 'running') return job.run_id ? 'Running' : 'Starting';
  const took = job.started && job.ended ? ` in ${(job.ended - job.started).toFixed(1)} s` : '';
  const errors = job.errors ? ` · ${job.errors} error${job.errors === 1 ? '' : 's'}` : '';
  return `${job.state.charAt(0).toUpperCase()}${job.state.slice(1)}${took}${errors}`;
}

function Stages({ stages }: { stages: AppStage[] }) {
  const most = Math.max(1, ...stages.map((s) => Math.max(s.received, s.sent)));
  return (
    <ol className="gb-stages" aria-label="progress">
      {stages.map((stage) => (
        <li key={stage.node_id} className={`gb-stage gb-stage-${stage.state}`} data-stage={stage.node_id}>
          <span className="gb-stage-title gb-ellipsis">{stage.title}</span>
          <span className="gb-stage-bar">
            <span style={{ width: `${(100 * Math.max(stage.received, stage.sent)) / most}%` }} />
          </span>
          <span className="gb-stage-count gb-muted">
            {stage.state === 'waiting' ? 'waiting' : `${stage.received} in · ${stage.sent} out`}
            {stage.rate ? ` · ${stage.rate.toFixed(0)}/s` : ''}
          </span>
        </li>
      ))}
    </ol>
  );
}

function ShareLink({ link }: { link: string }) {
  const url = new URL(link, window.location.origin).toString();
  return (
    <div className="gb-apprun-share">
      <span className="gb-muted">Link to this run</span>
      <input
        className="gb-input gb-mono"
        aria-label="link to this run"
        readOnly
        value={url}
        onFocus={(e) => e.target.select()}
      />
      <button className="gb-button" onClick={() => void navigator.clipboard?.writeText(url)}>
        Copy
      </button>
    </div>
  );
}
