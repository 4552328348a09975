// The node's footer: state, counts and speed while it runs, its first error once it fails.
// One line of fixed height, so the node never changes size while it runs.

import { formatRate, formatSeconds } from '../preview';
import type { NodeRun } from '../store/runState';
import { useRun } from '../store/run';
import { isActive } from '../store/runState';
import { useUi } from '../store/ui';

const WORDS: Record<string, string> = {
  waiting: 'waiting', running: 'running', paused: 'paused', cached: 'cached', done: 'done', failed: 'failed', stopped: 'stopped',
};

/** What a node that has not reported anything yet is doing: resources only get built. */
function quietWord(resource: boolean, active: boolean): string {
  if (resource) return active ? 'in use' : 'idle';
  return active ? 'waiting' : 'not run';
}

export function NodeStatus({ id, run, resource }: { id: string; run: NodeRun | undefined; resource: boolean }) {
  const inspect = useUi((s) => s.inspect);
  const active = useRun((s) => isActive(s.run));
  const paused = useRun((s) => s.run?.status === 'paused');
  if (!run) return <div className="gb-status gb-status-idle">idle</div>;
  if (run.state === 'waiting' && !run.errors.length && !run.received) {
    return <div className="gb-status gb-status-waiting"><span className="gb-status-word">{quietWord(resource, active)}</span></div>;
  }
  const error = run.errors[run.errors.length - 1];
  const out = Object.values(run.counts).reduce((a, b) => a + b, 0);
  const parts = [
    run.received ? `${run.received} in` : '',
    out || run.state !== 'waiting' ? `${out} out` : '',
    run.state === 'running' ? formatRate(run.rate) : '',
    run.seconds && run.state !== 'running' ? formatSeconds(run.seconds) : '',
  ].filter(Boolean);
  const state = paused && run.state === 'running' ? 'paused' : run.state;
  return (
    <div className={`gb-status gb-status-${state}`} title={run.reason || undefined}>
      <div className="gb-progress" />
      <span className="gb-status-word">{WORDS[state] ?? state}</span>
      <span className="gb-status-figures">{parts.join(' · ')}</span>
      {error ? (
        <button className="gb-error-link nodrag" title="show the traceback" onClick={() => inspect(id, 'errors')}>
          ⚠ {run.errors.length > 1 ? `${run.errors.length} errors` : error.error.type}
        </button>
      ) : null}
    </div>
  );
}
