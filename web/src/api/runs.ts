// Starting and steering runs, answering prompts, clearing caches, fetching outputs; run history
// and system stats.

import type { Catalog, LastRun, OutputItem, RunAccepted, RunList, RunMode, SystemStats } from '../protocol';
import { encodePath, request } from './http';

export interface RunRequest {
  workflow: string;
  mode: RunMode;
  node: string | null;
  graph: Record<string, unknown> | null;
  /** A node that fails on a dict reports it and the run goes on. */
  continue_on_error: boolean;
}

export const fetchCatalog = (): Promise<Catalog> => request('GET', '/api/catalog');
export const startRun = (body: RunRequest): Promise<RunAccepted> => request('POST', '/api/runs', body);

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

/** Past runs, newest first (the server keeps them in its run store). */
export const fetchRuns = (limit = 100): Promise<RunList> => request('GET', `/api/runs?limit=${limit}`);
export const fetchSystem = (): Promise<SystemStats> => request('GET', '/api/system');
