// The job queue: runs waiting their turn on the server, one after another.

import type { Job } from '../protocol';
import { request } from './http';
import type { RunBody } from './runs';

/** Where a queued job goes: one place up or down, first, last, or at an index. */
export type JobMove = 'up' | 'down' | 'top' | 'bottom' | number;

export const submitJob = (body: RunBody): Promise<Job> => request('POST', '/api/jobs', body);
export const cancelJob = (id: string): Promise<Job> => request('DELETE', `/api/jobs/${encodeURIComponent(id)}`);
export const moveJob = (id: string, to: JobMove): Promise<Job> =>
  request('POST', `/api/jobs/${encodeURIComponent(id)}/move`, { to });
export const stopJob = (id: string): Promise<Job> => request('POST', `/api/jobs/${encodeURIComponent(id)}/stop`);
