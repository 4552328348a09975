// Run, step, pause or resume, stop; and how the current run is doing.

import { run, steer } from '../actions/run';
import { Icon } from './Icon';
import { useElapsed } from '../hooks/useElapsed';
import { formatSeconds } from '../preview';
import { useEditor } from '../store/editor';
import { useRun } from '../store/run';
import { isActive } from '../store/runState';

function selectedNode(): string | null {
  const picked = useEditor.getState().nodes.filter((n) => n.selected && n.type === 'graph');
  return picked.length === 1 && picked[0] ? picked[0].id : null;
}

function RunStatus() {
  const current = useRun((s) => s.run);
  const path = useEditor((s) => s.file?.path);
  const live = current?.status === 'running' || current?.status === 'paused';
  const seconds = useElapsed(current?.started ?? 0, live, current?.seconds ?? 0);
  if (!current) return <span className="gb-run-status gb-muted">not run yet</span>;
  const where = current.workflow !== path ? ` (${current.workflow})` : '';
  const paused = current.status === 'paused' ? (current.pause_reason === 'step' && current.paused_node ? `paused after a step of ${current.paused_node}` : 'paused') : current.status;
  return (
    <span className={`gb-run-status gb-run-${current.status}`} data-run-status={current.status}>
      <span className="gb-dot" />
      {paused}
      {where} · {formatSeconds(seconds)}
      {current.errors ? ` · ${current.errors} error${current.errors === 1 ? '' : 's'}` : ''}
    </span>
  );
}

export function RunControls() {
  const current = useRun((s) => s.run);
  const connected = useRun((s) => s.connection === 'open');
  const hasFile = useEditor((s) => !!s.file);
  const active = isActive(current);
  const paused = current?.status === 'paused';
  return (
    <div className="gb-run-controls">
      <button className="gb-button gb-primary" disabled={!hasFile || active} onClick={() => void run('all')} title="Run the workflow (Ctrl+Enter)" aria-label="run">
        <Icon name="play" /> Run
      </button>
      <button
        className="gb-button"
        disabled={!hasFile || (active && !paused)}
        onClick={() => void (paused ? steer('step', selectedNode()) : run('step', selectedNode()))}
        title="Run one unit of work (of the selected node, or any), then pause"
        aria-label="step"
      >
        <Icon name="step" /> Step
      </button>
      <button className="gb-button" disabled={!active} onClick={() => void steer(paused ? 'resume' : 'pause')} aria-label={paused ? 'resume' : 'pause'}>
        <Icon name={paused ? 'resume' : 'pause'} /> {paused ? 'Resume' : 'Pause'}
      </button>
      <button className="gb-button gb-danger" disabled={!active} onClick={() => void steer('stop')} aria-label="stop">
        <Icon name="stop" /> Stop
      </button>
      <RunStatus />
      <span className={`gb-connection gb-connection-${connected ? 'open' : 'closed'}`} title={connected ? 'connected to the server' : 'reconnecting to the server…'} />
    </div>
  );
}
