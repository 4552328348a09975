// The wire protocol with the server: every websocket message in both directions and every HTTP
// payload, generated from the Python package graphbook.protocol and the run events of
// graphbook.events; a test (tests.web.test_protocol_sync) keeps them in step.

// <generated from graphbook.protocol by tests.web.protocol_ts>
export const VERSION = 1;

export type RunMode = 'all' | 'until' | 'step' | 'trigger';
export type RunStatus = 'running' | 'paused' | 'completed' | 'failed' | 'stopped';
export type EndStatus = 'completed' | 'failed' | 'stopped';
export type NodeState = 'waiting' | 'running' | 'cached' | 'done' | 'failed' | 'stopped';
export type NodeStatus = 'done' | 'failed' | 'stopped' | 'cached';
export type PlanAction = 'run' | 'reuse';
export type PlanCause = 'new' | 'cleared' | 'evicted' | 'uncacheable' | 'code' | 'params' | 'upstream' | 'upstream_runs' | 'incomplete' | 'lost' | 'needed' | 'unchanged' | 'triggered' | 'output_missing';
export type PauseReason = 'pause' | 'step';
export type WorkflowAction = 'saved' | 'deleted' | 'renamed';
export type ErrorCode = 'bad_json' | 'bad_message' | 'unknown_type' | 'too_large' | 'not_found' | 'bad_path' | 'conflict' | 'invalid_workflow' | 'invalid_inputs' | 'apps_only' | 'unauthorized' | 'forbidden' | 'no_run' | 'run_active' | 'store_failed' | 'internal';

export type Preview = ImagePreview | TensorPreview | string | number | boolean | null | Preview[] | { [key: string]: Preview };

export interface ErrorInfo {
  type: string;
  message: string;
  traceback: string;
}

export interface NodeTitle {
  node_id: string;
  title: string;
}

export interface KindStats {
  waiting: number;
  running: number;
  workers: number;
}

export interface MetricRow {
  step: number;
  values: Record<string, number>;
}

export interface PoolStats {
  workers: number;
  load: KindStats;
  dump: KindStats;
}

export interface RunStarted {
  run_id: string;
  workflow: string;
  mode: RunMode;
  node: string | null;
  nodes: NodeTitle[];
  started: number;
  type: 'run_started';
}

export interface NodePlan {
  run_id: string;
  node_id: string;
  action: PlanAction;
  cause: PlanCause;
  reason: string;
  type: 'node_plan';
}

export interface NodeStarted {
  run_id: string;
  node_id: string;
  type: 'node_started';
}

export interface BatchTiming {
  batches: number;
  compute: number;
  waited: number;
  device: string;
  device_busy: number | null;
}

export interface NodeProgress {
  run_id: string;
  node_id: string;
  received: number;
  counts: Record<string, number>;
  rate: number;
  timing: BatchTiming | null;
  type: 'node_progress';
}

export interface NodeLog {
  run_id: string;
  node_id: string;
  level: string;
  message: unknown;
  skipped: number;
  type: 'node_log';
}

export interface NodeOutput {
  run_id: string;
  node_id: string;
  output: string;
  index: number;
  preview: Preview;
  type: 'node_output';
}

export interface NodeMetrics {
  run_id: string;
  node_id: string;
  rows: MetricRow[];
  type: 'node_metrics';
}

export interface NodeError {
  run_id: string;
  node_id: string;
  error: ErrorInfo;
  item: Preview;
  type: 'node_error';
}

export interface NodeFinished {
  run_id: string;
  node_id: string;
  status: NodeStatus;
  counts: Record<string, number>;
  errors: number;
  seconds: number;
  timing: BatchTiming | null;
  type: 'node_finished';
}

export interface RunPaused {
  run_id: string;
  reason: PauseReason;
  node_id: string | null;
  at: number;
  paused: number;
  type: 'run_paused';
}

export interface RunResumed {
  run_id: string;
  paused: number;
  type: 'run_resumed';
}

export interface Prompt {
  run_id: string;
  prompt_id: string;
  node_id: string;
  prompt: Record<string, unknown>;
  data: Preview;
  type: 'prompt';
}

export interface PromptAnswered {
  run_id: string;
  prompt_id: string;
  node_id: string;
  answer: unknown;
  type: 'prompt_answered';
}

export interface RunFinished {
  run_id: string;
  status: EndStatus;
  seconds: number;
  counts: Record<string, Record<string, number>>;
  errors: number;
  paused: number;
  type: 'run_finished';
}

export interface ImagePreview {
  url: string | null;
  thumb: string | null;
  outside: string | null;
  size: number[] | null;
  mode: string | null;
  value: string | null;
  fields: Record<string, Preview>;
  type: 'image';
}

export interface TensorPreview {
  type: 'tensor' | 'array';
  shape: number[];
  dtype: string;
  device: string | null;
  min: number | string | null;
  max: number | string | null;
  mean: number | string | null;
}

export interface Problem {
  node_id: string | null;
  message: string;
  fix: string;
}

export interface LoadFailure {
  path: string;
  error: string;
  traceback: string;
}

export interface RunRequest {
  workflow: string;
  mode: RunMode;
  node: string | null;
  graph: Record<string, unknown> | null;
  continue_on_error: boolean;
  overrides: Record<string, Record<string, unknown>> | null;
  inputs: Record<string, unknown> | null;
  retry_interrupted: boolean;
  app: boolean;
}

export interface ErrorEntry {
  error: ErrorInfo;
  item: Preview;
}

export interface LogEntry {
  level: string;
  message: Preview;
}

export interface OutputPreview {
  index: number;
  preview: Preview;
}

export interface NodeSnapshot {
  node_id: string;
  title: string;
  state: NodeState;
  action: PlanAction | null;
  cause: PlanCause | null;
  reason: string;
  received: number;
  counts: Record<string, number>;
  rate: number;
  seconds: number;
  errors: ErrorEntry[];
  logs: LogEntry[];
  outputs: Record<string, OutputPreview>;
  logs_dropped: number;
  timing: BatchTiming | null;
}

export interface RunSnapshot {
  run_id: string;
  workflow: string;
  mode: RunMode;
  node: string | null;
  status: RunStatus;
  started: number;
  seconds: number;
  nodes: NodeSnapshot[];
  pause_reason: PauseReason | null;
  errors: number;
  paused_node: string | null;
  paused: number;
  paused_at: number | null;
}

export interface Hello {
  version: number;
  server: string;
  client_id: string;
  catalog_version: number;
  instance: string;
  type: 'hello';
}

export interface Snapshot {
  run: RunSnapshot | null;
  prompts: Prompt[];
  catalog_version: number;
  type: 'snapshot';
}

export interface CatalogChanged {
  version: number;
  added: string[];
  removed: string[];
  changed: string[];
  failures: LoadFailure[];
  type: 'catalog_changed';
}

export interface CacheCleared {
  workflow: string;
  nodes: string[];
  type: 'cache_cleared';
}

export interface WorkflowsChanged {
  path: string;
  action: WorkflowAction;
  to: string | null;
  type: 'workflows_changed';
}

export interface WorkflowChanged {
  path: string;
  hash: string;
  workflow: Record<string, unknown>;
  type: 'workflow_changed';
}

export interface WorkflowsListed {
  added: string[];
  removed: string[];
  type: 'workflows_listed';
}

export interface Error {
  code: ErrorCode;
  message: string;
  ref: string | null;
  problems: Problem[];
  type: 'error';
}

export interface Pong {
  ref: string | null;
  type: 'pong';
}

export interface Ping {
  ref: string | null;
  type: 'ping';
}

export interface Job {
  id: string;
  state: 'queued' | 'running' | 'completed' | 'failed' | 'stopped' | 'cancelled' | 'interrupted';
  request: RunRequest;
  created: number;
  position: number | null;
  run_id: string | null;
  started: number | null;
  ended: number | null;
  error: string | null;
  counts: Record<string, Record<string, number>>;
  errors: number;
  attempts: number;
  inline: boolean;
}

export interface JobList {
  queued: Job[];
  running: Job | null;
  finished: Job[];
}

export interface JobWait {
  job: Job;
  ended: boolean;
}

export interface Jobs {
  queued: Job[];
  running: Job | null;
  finished: Job[];
  type: 'jobs';
}

export interface ParamInfo {
  name: string;
  type: string;
  default: unknown;
  description: string;
  required: boolean;
}

export interface NodeInfo {
  name: string;
  kind: 'step' | 'source' | 'batch' | 'prompt' | 'resource';
  category: string;
  inputs: string[];
  outputs: string[];
  params: ParamInfo[];
  doc: string;
  code_hash: string;
  gives: string;
  pack: string;
  pack_kind: 'builtin' | 'pack' | 'custom' | 'example';
  component: string;
}

export interface Catalog {
  version: number;
  nodes: NodeInfo[];
  failures: LoadFailure[];
  fits: Record<string, string[]>;
}

export interface WorkflowFile {
  path: string;
  size: number;
  modified: number;
}

export interface RefusedFile {
  path: string;
  reason: string;
}

export interface WorkflowList {
  files: WorkflowFile[];
  refused: RefusedFile[];
}

export interface WorkflowDocument {
  path: string;
  hash: string;
  source_format: 'graphbook' | 'graphbook0';
  workflow: Record<string, unknown>;
  problems: Problem[];
}

export interface ComponentDocument {
  path: string;
  name: string;
  hash: string;
  version: string;
  component: Record<string, unknown>;
  problems: Problem[];
}

export interface WorkflowInputs {
  workflow: string;
  schema: Record<string, unknown>;
}

export interface TemplateInfo {
  name: string;
  title: string;
  description: string;
  workflow: Record<string, unknown>;
}

export interface TemplateList {
  templates: TemplateInfo[];
}

export interface TemplateCreated {
  path: string;
  samples: string[];
}

export interface RunAccepted {
  run_id: string;
}

export interface RunRecordInfo {
  run_id: string;
  workflow: string;
  status: string;
  mode: string;
  node: string | null;
  started: number;
  ended: number | null;
  counts: Record<string, unknown>;
  error: string | null;
  params: Record<string, unknown>;
  paused: number;
  kind: string;
  search: string | null;
  metrics: number;
}

export interface LastRun {
  workflow: string;
  run: RunSnapshot | null;
  source: 'live' | 'history' | null;
}

export interface RunList {
  runs: RunRecordInfo[];
}

export interface RunDetails {
  run: RunRecordInfo;
  nodes: NodeSnapshot[];
  config: Record<string, unknown>;
  rerun: boolean;
  changes: string[];
}

export interface MetricSeries {
  group: string;
  name: string;
  steps: number[];
  values: (number | null)[];
  dropped: number;
}

export interface RunMetrics {
  run_id: string;
  name: string;
  series: MetricSeries[];
}

export interface MetricsList {
  runs: RunMetrics[];
}

export interface OutputItem {
  workflow: string;
  node_id: string;
  output: string;
  index: number;
  total: number;
  item: Preview;
}

export interface GalleryRow {
  index: number;
  thumb: string | null;
  url: string | null;
  reason: string | null;
  path: string | null;
  fields: Record<string, unknown>;
}

export interface GalleryPage {
  workflow: string;
  node_id: string;
  output: string;
  total: number;
  matched: number;
  offset: number;
  rows: GalleryRow[];
  fields: string[];
  numeric: string[];
}

export interface GpuInfo {
  index: number;
  name: string;
  memory_used: number;
  memory_total: number;
}

export interface CacheInfo {
  used_bytes: number;
  budget_bytes: number;
  entries: number;
}

export interface SystemStats {
  cpu_percent: number;
  memory_used: number;
  memory_total: number;
  gpus: GpuInfo[];
  pool: PoolStats | null;
  cache: CacheInfo;
}

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  problems: Problem[];
  fields: Record<string, string>;
}

export interface ErrorReply {
  error: ErrorBody;
}

export interface AppOutput {
  name: string;
  node: string;
  output: string;
  kind: 'images' | 'table' | 'file' | 'text';
  description: string;
}

export interface AppSummary {
  workflow: string;
  title: string;
  doc: string;
  inputs: string[];
  outputs: string[];
  problems: number;
}

export interface AppList {
  apps: AppSummary[];
  apps_only: boolean;
}

export interface AppInfo {
  workflow: string;
  title: string;
  doc: string;
  schema: Record<string, unknown>;
  outputs: AppOutput[];
  problems: Problem[];
  apps_only: boolean;
  roots: string[];
  max_upload: number;
}

export interface AppStage {
  node_id: string;
  title: string;
  state: NodeState;
  received: number;
  sent: number;
  rate: number;
}

export interface AppFile {
  name: string;
  url: string;
  size: number;
}

export interface AppResult {
  name: string;
  kind: 'images' | 'table' | 'file' | 'text';
  node: string;
  output: string;
  count: number;
  description: string;
  note: string;
  columns: string[];
  downloads: AppFile[];
  files: AppFile[];
  text: string[];
}

export interface AppRun {
  job: Job;
  app: string;
  inputs: Record<string, unknown>;
  link: string;
  stages: AppStage[];
  results: AppResult[];
}

export interface AppRunList {
  app: string;
  runs: Job[];
}

export interface AppTablePage {
  columns: string[];
  rows: unknown[][];
  total: number;
  offset: number;
  sort: string | null;
  order: 'asc' | 'desc';
}

export interface BrowseEntry {
  name: string;
  folder: boolean;
  size: number;
}

export interface BrowseListing {
  root: string;
  path: string;
  absolute: string;
  entries: BrowseEntry[];
  roots: string[];
}

export interface Uploaded {
  path: string;
  name: string;
  size: number;
}

export type ServerMessage =
  | Hello
  | Snapshot
  | RunStarted
  | NodePlan
  | NodeStarted
  | NodeProgress
  | NodeLog
  | NodeOutput
  | NodeMetrics
  | NodeError
  | NodeFinished
  | RunPaused
  | RunResumed
  | RunFinished
  | Prompt
  | PromptAnswered
  | CatalogChanged
  | CacheCleared
  | WorkflowsChanged
  | WorkflowChanged
  | WorkflowsListed
  | Error
  | Pong
  | Jobs;

export type ClientMessage =
  | Ping;

export const SERVER_MESSAGE_TYPES = [
  'hello',
  'snapshot',
  'run_started',
  'node_plan',
  'node_started',
  'node_progress',
  'node_log',
  'node_output',
  'node_metrics',
  'node_error',
  'node_finished',
  'run_paused',
  'run_resumed',
  'run_finished',
  'prompt',
  'prompt_answered',
  'catalog_changed',
  'cache_cleared',
  'workflows_changed',
  'workflow_changed',
  'workflows_listed',
  'error',
  'pong',
  'jobs',
] as const;

export const CLIENT_MESSAGE_TYPES = [
  'ping',
] as const;
// </generated>

export type ServerMessageType = (typeof SERVER_MESSAGE_TYPES)[number];
export type ClientMessageType = (typeof CLIENT_MESSAGE_TYPES)[number];

/** A client message before it is sent: `type` names it and fields with defaults may be left out. */
export type Outgoing = ClientMessage;

export class ProtocolError extends globalThis.Error {
  override name = 'ProtocolError';
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const SERVER_TYPES: ReadonlySet<string> = new Set(SERVER_MESSAGE_TYPES);

/** A server message from JSON text; throws ProtocolError for bad JSON or an unknown type. */
export function decodeServer(text: string): ServerMessage {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ProtocolError('bad_json', `a message must be JSON: ${(error as globalThis.Error).message}`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new ProtocolError('bad_message', 'a message is a JSON object');
  }
  const type = (data as { type?: unknown }).type;
  if (typeof type !== 'string' || !SERVER_TYPES.has(type)) {
    throw new ProtocolError('unknown_type', `unknown message type ${JSON.stringify(type)}`);
  }
  return data as ServerMessage;
}

export function encodeClient(message: ClientMessage): string {
  return JSON.stringify(message);
}

/** Every HTTP error body is an ErrorReply; this reads one out of anything. */
export function errorBodyOf(data: unknown): ErrorBody | null {
  if (typeof data !== 'object' || data === null) return null;
  const error = (data as { error?: unknown }).error;
  if (typeof error !== 'object' || error === null) return null;
  const body = error as Partial<ErrorBody>;
  return typeof body.message === 'string' ? (body as ErrorBody) : null;
}
