// Steering the job queue from the page: cancel, move, stop; failures said as notices.

import { type JobMove, cancelJob, moveJob, stopJob } from '../api/jobs';
import { failed } from './files';

async function attempt(work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (error) {
    failed(error);
  }
}

export const cancel = (id: string): Promise<void> => attempt(() => cancelJob(id));
export const move = (id: string, to: JobMove): Promise<void> => attempt(() => moveJob(id, to));
export const stop = (id: string): Promise<void> => attempt(() => stopJob(id));
