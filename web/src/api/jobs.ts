// The job queue: runs waiting their turn on the server, one after another.

import type { Job, JobRequest } from '../protocol';
import { request } from './http';

/** Where a queued job goes: one place up or down, first, last, or at an index. */
export type JobMove = 'up' | 'down' | 'top' | 'bottom' | number;

export type JobBody = Omit<JobRequest, 'retry_interrupted' | 'overrides' | 'inputs'> &
  Partial<Pick<JobRequest, 'retry_interrupted' | 'overrides' | 'inputs'>>;

export const submitJob = (body: JobBody): Promise<Job> => request('POST', '/api/jobs', body);
export const cancelJob = (id: string): Promise<Job> => request('DELETE', `/api/jobs/${encodeURIComponent(id)}`);
export const moveJob = (id: string, to: JobMove): Promise<Job> =>
  request('POST', `/api/jobs/${encodeURIComponent(id)}/move`, { to });
export const stopJob = (id: string): Promise<Job> => request('POST', `/api/jobs/${encodeURIComponent(id)}/stop`);
