// Starting and steering runs, answering prompts, clearing caches, fetching outputs; run history
// and system stats.

import type {
  Catalog,
  LastRun,
  MetricsList,
  OutputItem,
  RunAccepted,
  RunDetails,
  RunList,
  RunRequest,
  SystemStats,
} from '../protocol';
import { encodePath, request } from './http';

/** A run as the editor asks for it (POST /api/runs, POST /api/jobs): the protocol's RunRequest,
 * its overrides, inputs, the job's `retry_interrupted` and `app` left out when not given. */
export type RunBody = Omit<RunRequest, 'retry_interrupted' | 'overrides' | 'inputs' | 'app'> &
  Partial<Pick<RunRequest, 'retry_interrupted' | 'overrides' | 'inputs' | 'app'>>;

export const fetchCatalog = (): Promise<Catalog> => request('GET', '/api/catalog');
export const startRun = (body: RunBody): Promise<RunAccepted> => request('POST', '/api/runs', body);

export type RunCommand = 'pause' | 'resume' | 'step' | 'stop';
export function steerRun(command: RunCommand, node: string | null = null): Promise<{ ok: boolean }> {
  return request('POST', `/api/runs/current/${command}`, command === 'step' ? { node } : undefined);
}

export const answerPrompt = (promptId: string, answer: unknown): Promise<{ ok: boolean }> =>
  request('POST', `/api/prompts/${encodePath(promptId)}`, { answer });

export const clearCache = (workflow: string, node: string | null): Promise<unknown> =>
  request('POST', '/api/cache/clear', { workflow, node });

export function fetchOutput(workflow: string, node: string, output: string, index: number): Promise<OutputItem> {
  const query = new URLSearchParams({ workflow, node, output, index: String(index) });
  return request('GET', `/api/outputs?${query.toString()}`);
}

/** The workflow's last run as the server saw it, or from its run store after a restart. */
export const fetchLastRun = (workflow: string): Promise<LastRun> =>
  request('GET', `/api/runs/last?${new URLSearchParams({ workflow }).toString()}`);

/** Past runs of every kind (workflow, training, search, batch), newest first, from the server's run store. */
export const fetchRuns = (limit = 300): Promise<RunList> => request('GET', `/api/runs?limit=${limit}`);
/** A past run opened: what each node did, what it was started with, how its file changed since. */
export const fetchRunDetails = (runId: string): Promise<RunDetails> =>
  request('GET', `/api/runs/${encodeURIComponent(runId)}/details`);
/** The metric curves of several runs (at most 50). */
export const fetchMetrics = (runIds: string[]): Promise<MetricsList> =>
  request('GET', `/api/metrics?runs=${runIds.map(encodeURIComponent).join(',')}`);
/** Runs a past workflow run again as it ran (its workflow, parameters, mode). */
export const rerunRun = (runId: string): Promise<RunAccepted> =>
  request('POST', `/api/runs/${encodeURIComponent(runId)}/rerun`);
export const fetchSystem = (): Promise<SystemStats> => request('GET', '/api/system');
