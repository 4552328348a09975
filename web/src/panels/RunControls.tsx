// Run, step, pause or resume, stop; how the current run is doing; and whether that is live.

import { useEffect, useState } from 'react';
import { OFFLINE, queue, run, steer } from '../actions/run';
import { Icon } from './Icon';
import { useElapsed } from '../hooks/useElapsed';
import { useNow } from '../hooks/useNow';
import { formatSeconds } from '../preview';
import { useEditor } from '../store/editor';
import { type Starting, isOffline, useRun } from '../store/run';
import { type RunView, isActive, runClock } from '../store/runState';
import { useCatalog } from '../store/catalog';
import type { NodeKind } from '../catalog';
import { isGraphNode } from '../workflow/flow';
import { useUi } from '../store/ui';

function selectedNode(): string | null {
  const picked = useEditor.getState().nodes.filter((n) => n.selected && n.type === 'graph');
  return picked.length === 1 && picked[0] ? picked[0].id : null;
}

/** What a step of a node of this kind runs: one batch, one dict, one value, one answer. */
const UNITS: Record<NodeKind, string> = {
  batch: 'one batch of',
  source: 'one value from',
  prompt: 'one answer to',
  step: 'one dict through',
  resource: 'building',
};

/** "paused", or after a step which node stepped and by how much ("paused after one batch of Classify"). */
function pausedText(run: RunView): string {
  const id = run.paused_node;
  if (run.pause_reason !== 'step' || !id) return 'paused';
  const type = useEditor.getState().nodes.find((n) => n.id === id && isGraphNode(n))?.data;
  const kind = type && 'type' in type ? useCatalog.getState().catalog.nodes[type.type]?.kind : undefined;
  const title = run.nodes[id]?.title || id;
  return `paused after ${kind ? UNITS[kind] : 'a step of'} ${title}`;
}

function RunStatus() {
  const current = useRun((s) => s.run);
  const starting = useRun((s) => s.starting);
  const path = useEditor((s) => s.file?.path);
  const lostAt = useRun((s) => (isOffline(s) ? s.lostAt : null));
  // The clock runs while the run does; it stands still while paused, and while offline at the moment the link was lost.
  const ticking = current?.status === 'running' && lostAt === null;
  const seconds = useElapsed((now) => (current ? runClock(current, lostAt ?? now) : 0), ticking);
  if (starting) return <StartingStatus starting={starting} path={path} />;
  if (!current) return <span className="gb-run-status gb-muted">not run yet</span>;
  const stale = lostAt !== null;
  const where = current.workflow !== path ? ` (${current.workflow})` : '';
  const paused = current.status === 'paused' ? pausedText(current) : current.status;
  const text = `${paused}${where} · ${formatSeconds(seconds)}${current.errors ? ` · ${current.errors} error${current.errors === 1 ? '' : 's'}` : ''}`;
  return (
    <span
      className={`gb-run-status gb-run-${current.status}${stale ? ' gb-run-stale' : ''}`}
      data-run-status={current.status}
      data-run-id={current.run_id}
      data-stale={stale || undefined}
      // The whole status, for when a narrow window cuts it after two lines.
      title={stale ? `Last known state, as of ${new Date(lostAt * 1000).toLocaleTimeString()}: ${text}` : text}
    >
      <span className="gb-dot" />
      <span className="gb-run-text">{text}</span>
    </span>
  );
}

/** A run accepted and not yet begun: its run process is starting (or joining Ray). */
function StartingStatus({ starting, path }: { starting: Starting; path: string | undefined }) {
  const where = starting.workflow !== path ? ` (${starting.workflow})` : '';
  return (
    <span
      className="gb-run-status gb-run-starting"
      data-run-status="starting"
      data-run-id={starting.run_id}
      title={`The run${where} was accepted; its run process is starting`}
    >
      <span className="gb-dot" />
      <span className="gb-run-text">starting…{where}</span>
    </span>
  );
}

/** A green dot while connected; while not, says so plainly, with how long and how many tries. */
function Connection() {
  const offline = useRun(isOffline);
  const lostAt = useRun((s) => s.lostAt);
  const retries = useRun((s) => s.retries);
  const opened = useRun((s) => s.opened);
  if (!offline) return <span className="gb-connection gb-connection-open" title="connected to the server" />;
  // The first try, as the page loads, is a moment: no need to flash a banner for it.
  if (!opened && lostAt === null)
    return <span className="gb-connection gb-connection-first" title="connecting to the server…" />;
  return <Offline lostAt={lostAt} retries={retries} opened={opened} />;
}

function Offline({ lostAt, retries, opened }: { lostAt: number | null; retries: number; opened: boolean }) {
  const now = useNow(1000);
  const away = lostAt === null ? 0 : Math.max(0, Math.floor(now - lostAt));
  const word = opened ? 'Reconnecting…' : 'Connecting…';
  const tries = retries ? `; attempt ${retries + 1}` : '';
  const title = opened
    ? `The connection to the server was lost ${away} s ago; reconnecting${tries}. The run may have gone on: what the page shows is as it was then, and is brought up to date once connected.`
    : `connecting to the server${tries}`;
  return (
    <span className="gb-connection gb-connection-closed" role="status" title={title} data-retries={retries}>
      <span className="gb-spinner" aria-hidden="true" />
      {word}
      {away ? <span className="gb-connection-away">{away} s</span> : null}
    </span>
  );
}

/** How many runs one click of Run (or Queue) asks for, as ComfyUI's batch count: the first runs
 * now (unless a run is going), the others wait in the queue. */
interface Times {
  times: number;
  setTimes(times: number): void;
}

const MAX_TIMES = 100;

function BatchCount({ times, setTimes }: Times) {
  return (
    <label className="gb-run-option gb-run-times">
      <input
        type="number"
        className="gb-input"
        min={1}
        max={MAX_TIMES}
        value={times}
        aria-label="batch count"
        onChange={(event) => setTimes(Math.min(MAX_TIMES, Math.max(1, Math.round(Number(event.target.value) || 1))))}
      />
      <span>
        <strong>Batch count</strong>
        <small>Run the workflow this many times: the first run starts now, the others wait in the queue.</small>
      </span>
    </label>
  );
}

/**
 * The Run button's menu: how many runs a click asks for, and whether the next run goes on past a
 * node's error (shown on the node) or ends at the first. A dot on the caret says an option is
 * on, so the top bar need not hold it.
 */
function RunMenu({ times, setTimes }: Times) {
  const on = useUi((s) => s.continueOnError);
  const [open, setOpen] = useState(false);
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent): void => {
      if (e.key === 'Escape') setOpen(false);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [open]);
  return (
    <span className="gb-run-menu">
      <button
        className={`gb-button gb-primary gb-run-caret${on || times > 1 ? ' gb-on' : ''}`}
        aria-haspopup="menu"
        aria-expanded={open}
        aria-label="run options"
        title={`Run options${times > 1 ? `: ${times} runs a click` : ''}${on ? ': continue on error is on' : ''}`}
        onClick={() => setOpen(!open)}
      >
        <Icon name="chevronDown" size={12} />
      </button>
      {open ? (
        <>
          <span className="gb-menu-backdrop" onMouseDown={() => setOpen(false)} />
          <div className="gb-menu gb-run-options" role="menu">
            <BatchCount times={times} setTimes={setTimes} />
            <label className="gb-run-option" role="menuitemcheckbox" aria-checked={on}>
              <input
                type="checkbox"
                checked={on}
                onChange={(event) => useUi.getState().setContinueOnError(event.target.checked)}
                aria-label="continue on error"
              />
              <span>
                <strong>Continue on error</strong>
                <small>
                  A node that fails on a dict shows the error and the other dicts go on. Off: the first error ends the
                  run.
                </small>
              </span>
            </label>
          </div>
        </>
      ) : null}
    </span>
  );
}

interface ButtonState {
  offline: boolean;
  hasFile: boolean;
  active: boolean;
  paused: boolean;
  why: (title: string) => string;
}

function useButtonState(): ButtonState {
  const current = useRun((s) => s.run);
  const starting = useRun((s) => s.starting !== null);
  const offline = useRun(isOffline);
  const hasFile = useEditor((s) => !!s.file);
  const why = (title: string): string => (offline ? OFFLINE : title);
  // A run starting is going as the server sees it: Run queues, Stop and Pause reach it.
  const active = starting || isActive(current);
  return { offline, hasFile, active, paused: !starting && current?.status === 'paused', why };
}

/** Runs the open workflow `times` times: now (unless a run is going) and then from the queue. */
async function runTimes(times: number, active: boolean): Promise<void> {
  let left = times;
  if (!active) {
    await run('all');
    left -= 1;
  }
  for (; left > 0; left--) await queue('all');
}

/** Run, or Queue while a run is going; with a batch count above one, how many runs it asks for. */
function RunOrQueue({ state, times }: { state: ButtonState; times: number }) {
  const continueOnError = useUi((s) => s.continueOnError);
  const { offline, hasFile, active, why } = state;
  const word = active ? 'Queue' : 'Run';
  const tip = active
    ? 'A run is going: queue this workflow to run once it ends'
    : continueOnError
      ? 'Run the workflow, going on past node errors (Ctrl+Enter)'
      : 'Run the workflow (Ctrl+Enter)';
  return (
    <button
      className="gb-button gb-primary gb-run-button"
      disabled={offline || !hasFile}
      onClick={() => void runTimes(times, active)}
      title={why(times > 1 ? `${tip}; ${times} runs (batch count, in the run options)` : tip)}
      aria-label={active ? 'queue' : 'run'}
    >
      <Icon name={active ? 'plus' : 'play'} /> <span className="gb-run-word">{word}</span>
      {times > 1 ? <span className="gb-run-times-badge">×{times}</span> : null}
    </button>
  );
}

function SteerButtons({ state }: { state: ButtonState }) {
  const { offline, hasFile, active, paused, why } = state;
  return (
    <>
      <button
        className="gb-button"
        disabled={offline || !hasFile || (active && !paused)}
        onClick={() => void (paused ? steer('step', selectedNode()) : run('step', selectedNode()))}
        title={why('Run one unit of work (of the selected node, or any), then pause')}
        aria-label="step"
      >
        <Icon name="step" /> <span className="gb-button-label">Step</span>
      </button>
      <button
        className="gb-button"
        disabled={offline || !active}
        onClick={() => void steer(paused ? 'resume' : 'pause')}
        title={why(paused ? 'Resume the run' : 'Pause the run')}
        aria-label={paused ? 'resume' : 'pause'}
      >
        <Icon name={paused ? 'resume' : 'pause'} />{' '}
        <span className="gb-button-label">{paused ? 'Resume' : 'Pause'}</span>
      </button>
      <button
        className="gb-button gb-danger"
        disabled={offline || !active}
        onClick={() => void steer('stop')}
        title={why('Stop the run')}
        aria-label="stop"
      >
        <Icon name="stop" /> <span className="gb-button-label">Stop</span>
      </button>
    </>
  );
}

export function RunControls() {
  const state = useButtonState();
  const [times, setTimes] = useState(1);
  return (
    <div className="gb-run-controls">
      <span className="gb-split-button">
        <RunOrQueue state={state} times={times} />
        <RunMenu times={times} setTimes={setTimes} />
      </span>
      <SteerButtons state={state} />
      <span className="gb-run-state">
        <RunStatus />
        <Connection />
      </span>
    </div>
  );
}
