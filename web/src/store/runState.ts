// The live view of a run as data: a snapshot replaced on (re)connect, then each event folded
// in by `applyMessage`, a pure function. It must fold as graphbook.runview does (the server's
// snapshot): tests/fixtures/runview/ holds message sequences and the state expected after each,
// checked here by __tests__/runViewFixtures.test.ts and in Python by tests/unit/test_runview.py.

import type {
  LogEntry,
  ErrorEntry,
  NodeSnapshot,
  OutputPreview,
  Preview,
  Prompt,
  RunMode,
  RunSnapshot,
  RunStatus,
  ServerMessage,
} from '../protocol';

export const MAX_LOGS = 200;
export const MAX_ERRORS = 20;

export type NodeRun = Required<Omit<NodeSnapshot, 'action' | 'cause'>> & Pick<NodeSnapshot, 'action' | 'cause'>;

export interface RunView {
  run_id: string;
  workflow: string;
  mode: RunMode;
  node: string | null;
  status: RunStatus;
  started: number;
  seconds: number;
  pause_reason: RunSnapshot['pause_reason'];
  /** With a `step` pause: the node whose unit of work ended the step. */
  paused_node: string | null;
  /** Seconds paused up to the last resume (all of them once the run ended): the clock leaves them out. */
  paused: number;
  /** While paused: the unix time the run's clock stopped. */
  paused_at: number | null;
  errors: number;
  order: string[];
  nodes: Record<string, NodeRun>;
}

export interface RunState {
  run: RunView | null;
  prompts: Record<string, Prompt>;
  catalogVersion: number;
}

export const EMPTY_RUN_STATE: RunState = { run: null, prompts: {}, catalogVersion: 0 };

export function emptyNode(node_id: string, title = node_id): NodeRun {
  return {
    node_id,
    title,
    state: 'waiting',
    action: null,
    cause: null,
    reason: '',
    received: 0,
    counts: {},
    rate: 0,
    seconds: 0,
    errors: [],
    logs: [],
    outputs: {},
    logs_dropped: 0,
    timing: null,
  };
}

function fromSnapshot(node: NodeSnapshot): NodeRun {
  return { ...emptyNode(node.node_id, node.title), ...node } as NodeRun;
}

export function runFromSnapshot(run: RunSnapshot): RunView {
  return {
    run_id: run.run_id,
    workflow: run.workflow,
    mode: run.mode,
    node: run.node,
    status: run.status,
    started: run.started,
    seconds: run.seconds,
    pause_reason: run.pause_reason ?? null,
    paused_node: run.paused_node ?? null,
    paused: run.paused ?? 0,
    paused_at: run.paused_at ?? null,
    errors: run.errors ?? 0,
    order: run.nodes.map((n) => n.node_id),
    nodes: Object.fromEntries(run.nodes.map((n) => [n.node_id, fromSnapshot(n)])),
  };
}

function updateNode(state: RunState, runId: string, nodeId: string, update: (node: NodeRun) => NodeRun): RunState {
  const run = state.run;
  const node = run?.nodes[nodeId];
  if (!run || run.run_id !== runId || !node) return state;
  return { ...state, run: { ...run, nodes: { ...run.nodes, [nodeId]: update(node) } } };
}

/** Dicts handed on per second over a node's whole run. */
function averageRate(counts: Record<string, number>, seconds: number): number {
  return seconds > 0 ? Object.values(counts).reduce((a, b) => a + b, 0) / seconds : 0;
}

function withoutRunPrompts(prompts: Record<string, Prompt>, runId: string): Record<string, Prompt> {
  return Object.fromEntries(Object.entries(prompts).filter(([, p]) => p.run_id !== runId));
}

function updateRun(state: RunState, runId: string, update: (run: RunView) => RunView): RunState {
  return state.run && state.run.run_id === runId ? { ...state, run: update(state.run) } : state;
}

const appendBounded = <T>(list: T[], item: T, limit: number): T[] => [...list, item].slice(-limit);

function withoutPrompt(prompts: Record<string, Prompt>, id: string): Record<string, Prompt> {
  const { [id]: _gone, ...rest } = prompts;
  return rest;
}

type Message<K extends ServerMessage['type']> = Extract<ServerMessage, { type: K }>;
type NodeMessage = Message<
  'node_plan' | 'node_started' | 'node_progress' | 'node_log' | 'node_output' | 'node_finished'
>;

/** The state after one server message; messages about another run are ignored. */
export function applyMessage(state: RunState, message: ServerMessage): RunState {
  switch (message.type) {
    case 'snapshot':
      return {
        run: message.run ? runFromSnapshot(message.run) : null,
        prompts: Object.fromEntries(message.prompts.map((p) => [p.prompt_id, p])),
        catalogVersion: message.catalog_version,
      };
    case 'run_started':
      return { ...state, prompts: {}, run: startedRun(message) };
    case 'node_plan':
    case 'node_started':
    case 'node_progress':
    case 'node_log':
    case 'node_output':
    case 'node_finished':
      return updateNode(state, message.run_id, message.node_id, (n) => nodeAfter(n, message));
    case 'node_error':
      return nodeFailed(state, message);
    case 'run_paused':
      return updateRun(state, message.run_id, (r) => pausedRun(r, message));
    case 'run_resumed':
      return updateRun(state, message.run_id, (r) => resumedRun(r, message));
    case 'run_finished':
      return updateRun({ ...state, prompts: withoutRunPrompts(state.prompts, message.run_id) }, message.run_id, (r) =>
        finishedRun(r, message),
      );
    default:
      return applyOther(state, message);
  }
}

/** The state after a message that is not about a run's progress: prompts, the catalog, a cleared cache. */
function applyOther(state: RunState, message: ServerMessage): RunState {
  switch (message.type) {
    case 'prompt':
      return { ...state, prompts: { ...state.prompts, [message.prompt_id]: { ...message } } };
    case 'prompt_answered':
      return { ...state, prompts: withoutPrompt(state.prompts, message.prompt_id) };
    case 'catalog_changed':
      return { ...state, catalogVersion: message.version };
    case 'cache_cleared':
      return clearNodes(state, message.workflow, message.nodes);
    default:
      return state;
  }
}

function startedRun(message: Message<'run_started'>): RunView {
  return {
    run_id: message.run_id,
    workflow: message.workflow,
    mode: message.mode,
    node: message.node,
    status: 'running',
    started: message.started,
    seconds: 0,
    pause_reason: null,
    paused_node: null,
    paused: 0,
    paused_at: null,
    errors: 0,
    order: message.nodes.map((n) => n.node_id),
    nodes: Object.fromEntries(message.nodes.map((n) => [n.node_id, emptyNode(n.node_id, n.title)])),
  };
}

/** Node `n` after a message about it. */
function nodeAfter(n: NodeRun, message: NodeMessage): NodeRun {
  switch (message.type) {
    case 'node_plan':
      return { ...n, action: message.action, cause: message.cause, reason: message.reason };
    case 'node_started':
      return { ...n, state: 'running' };
    case 'node_progress':
      return {
        ...n,
        state: n.state === 'waiting' ? 'running' : n.state,
        received: message.received,
        counts: message.counts,
        rate: message.rate,
        timing: message.timing ?? n.timing,
      };
    case 'node_log': {
      // the server sends a line of text, or the preview of what the node logged (loglimit.py)
      const entry: LogEntry = { level: message.level, message: message.message as Preview };
      return {
        ...n,
        logs: appendBounded(n.logs, entry, MAX_LOGS),
        logs_dropped: n.logs_dropped + (message.skipped ?? 0) + (n.logs.length >= MAX_LOGS ? 1 : 0),
      };
    }
    case 'node_output': {
      const preview: OutputPreview = { index: message.index, preview: message.preview };
      return { ...n, outputs: { ...n.outputs, [message.output]: preview } };
    }
    case 'node_finished': {
      const { counts, seconds } = message;
      const timing = message.timing ?? n.timing;
      return { ...n, state: message.status, counts, seconds, rate: averageRate(counts, seconds), timing };
    }
  }
}

function nodeFailed(state: RunState, message: Message<'node_error'>): RunState {
  const error: ErrorEntry = { error: message.error, item: message.item };
  const next = updateNode(state, message.run_id, message.node_id, (n) => ({
    ...n,
    errors: appendBounded(n.errors, error, MAX_ERRORS),
  }));
  return updateRun(next, message.run_id, (r) => ({ ...r, errors: r.errors + 1 }));
}

function pausedRun(r: RunView, message: Message<'run_paused'>): RunView {
  return {
    ...r,
    status: 'paused',
    pause_reason: message.reason,
    paused_node: message.node_id ?? null,
    paused: message.paused ?? 0,
    paused_at: message.at ?? null,
  };
}

function resumedRun(r: RunView, message: Message<'run_resumed'>): RunView {
  return {
    ...r,
    status: 'running',
    pause_reason: null,
    paused_node: null,
    paused: message.paused ?? r.paused,
    paused_at: null,
  };
}

function finishedRun(r: RunView, message: Message<'run_finished'>): RunView {
  return {
    ...r,
    status: message.status,
    seconds: message.seconds,
    errors: message.errors,
    pause_reason: null,
    paused_node: null,
    paused: message.paused ?? r.paused,
    paused_at: null,
    nodes: finishNodes(r.nodes, message.status),
  };
}

/** Nodes still marked running when the run ends did not get to finish. */
function finishNodes(nodes: Record<string, NodeRun>, status: RunStatus): Record<string, NodeRun> {
  const ended = status === 'completed' ? 'done' : 'stopped';
  return Object.fromEntries(
    Object.entries(nodes).map(([id, n]) => [id, n.state === 'running' ? { ...n, state: ended, rate: 0 } : n]),
  );
}

function clearNodes(state: RunState, workflow: string, ids: string[]): RunState {
  const run = state.run;
  if (!run || run.workflow !== workflow || run.status === 'running' || run.status === 'paused') return state;
  const nodes = { ...run.nodes };
  for (const id of ids) if (nodes[id]) nodes[id] = emptyNode(id, nodes[id].title);
  return { ...state, run: { ...run, nodes } };
}

/** Seconds `run` has run by unix time `now`, not counting its pauses: stands still while paused. */
export function runClock(run: RunView, now: number): number {
  if (!isActive(run)) return run.seconds;
  const end = run.paused_at ?? now;
  return Math.max(0, end - run.started - run.paused);
}

export function isActive(run: RunView | null): boolean {
  return !!run && (run.status === 'running' || run.status === 'paused');
}
