// The Queue tab: the job running now (with Stop), the jobs waiting their turn (cancel, move up or
// down) and the jobs that ended lately; as the server's `jobs` messages say, in every open page.

import { cancel, move, stop } from '../actions/jobs';
import { steer } from '../actions/run';
import { howText, overridesText } from '../jobWords';
import type { Job } from '../protocol';
import { useJobs } from '../store/jobs';
import { useRun } from '../store/run';
import { type RunView, isActive } from '../store/runState';
import { Icon } from './Icon';
import '../styles/queue.css';

function What({ job }: { job: Job }) {
  const { workflow } = job.request;
  const set = overridesText(job);
  const how = howText(job);
  return (
    <span className="gb-job-what">
      <span className="gb-job-workflow gb-ellipsis" title={workflow}>
        {workflow}
      </span>
      {how ? <small className="gb-muted">{how}</small> : null}
      {set ? (
        <small className="gb-job-overrides gb-ellipsis" title={set}>
          {set}
        </small>
      ) : null}
    </span>
  );
}

function Waiting({ job, index, last }: { job: Job; index: number; last: boolean }) {
  const name = job.request.workflow;
  return (
    <li className="gb-job" data-job={job.id} data-state={job.state}>
      <span className="gb-job-place">{index + 1}</span>
      <What job={job} />
      <span className="gb-job-actions">
        <button
          className="gb-button gb-icon-button"
          disabled={index === 0}
          onClick={() => void move(job.id, 'up')}
          aria-label={`move ${name} up`}
          title="Run it earlier"
        >
          ↑
        </button>
        <button
          className="gb-button gb-icon-button"
          disabled={last}
          onClick={() => void move(job.id, 'down')}
          aria-label={`move ${name} down`}
          title="Run it later"
        >
          ↓
        </button>
        <button
          className="gb-button gb-icon-button"
          onClick={() => void cancel(job.id)}
          aria-label={`cancel ${name}`}
          title="Take it out of the queue"
        >
          <Icon name="close" size={12} />
        </button>
      </span>
    </li>
  );
}

function Running({ job }: { job: Job }) {
  const starting = job.run_id === null;
  return (
    <li className="gb-job gb-job-running" data-job={job.id} data-state={job.state}>
      <span className="gb-dot" />
      <What job={job} />
      <span className="gb-job-actions">
        <small className="gb-muted">{starting ? 'starting…' : 'running'}</small>
        <button
          className="gb-button gb-danger gb-icon-button"
          disabled={starting}
          onClick={() => void stop(job.id)}
          aria-label={`stop ${job.request.workflow}`}
          title="Stop its run"
        >
          <Icon name="stop" size={12} />
        </button>
      </span>
    </li>
  );
}

/** A run started with Run (not through the queue): it holds the queue back all the same. */
function CurrentRun({ run }: { run: RunView }) {
  return (
    <li className="gb-job gb-job-running" data-run={run.run_id} data-state={run.status}>
      <span className="gb-dot" />
      <span className="gb-job-what">
        <span className="gb-job-workflow gb-ellipsis" title={run.workflow}>
          {run.workflow}
        </span>
        <small className="gb-muted">started with Run</small>
      </span>
      <span className="gb-job-actions">
        <small className="gb-muted">{run.status}</small>
        <button
          className="gb-button gb-danger gb-icon-button"
          onClick={() => void steer('stop')}
          aria-label={`stop ${run.workflow}`}
          title="Stop the run"
        >
          <Icon name="stop" size={12} />
        </button>
      </span>
    </li>
  );
}

/** The job running now, else the run going now, else none. */
function RunningNow({ running }: { running: Job | null }) {
  const current = useRun((s) => s.run);
  if (running)
    return (
      <ul className="gb-jobs gb-jobs-running">
        <Running job={running} />
      </ul>
    );
  if (current && isActive(current))
    return (
      <ul className="gb-jobs gb-jobs-running">
        <CurrentRun run={current} />
      </ul>
    );
  return <p className="gb-empty">No job is running.</p>;
}

function Ended({ job }: { job: Job }) {
  return (
    <li className={`gb-job gb-job-ended gb-job-${job.state}`} data-job={job.id} data-state={job.state}>
      <span className="gb-dot" />
      <What job={job} />
      <span className="gb-job-state" title={job.error ?? undefined}>
        {job.state}
      </span>
    </li>
  );
}

export function QueuePanel() {
  const { queued, running, finished } = useJobs();
  return (
    <div className="gb-queue" aria-label="job queue">
      <h3 className="gb-queue-title">Running</h3>
      <RunningNow running={running} />
      <h3 className="gb-queue-title">Waiting {queued.length ? `(${queued.length})` : ''}</h3>
      {queued.length ? (
        <ol className="gb-jobs gb-jobs-waiting">
          {queued.map((job, index) => (
            <Waiting key={job.id} job={job} index={index} last={index === queued.length - 1} />
          ))}
        </ol>
      ) : (
        <p className="gb-empty">
          Nothing is waiting. While a run is going, Run becomes Queue: the workflow runs once the runs before it end. A
          batch count (in Run's options) queues several runs at once.
        </p>
      )}
      {finished.length ? (
        <>
          <h3 className="gb-queue-title">Ended</h3>
          <ul className="gb-jobs gb-jobs-ended">
            {finished.slice(0, 20).map((job) => (
              <Ended key={job.id} job={job} />
            ))}
          </ul>
        </>
      ) : null}
    </div>
  );
}
