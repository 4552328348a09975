// The server's job queue as its `jobs` messages last said: waiting, running, recently ended.

import { create } from 'zustand';
import type { Job, Jobs } from '../protocol';

export interface JobsState {
  queued: Job[];
  running: Job | null;
  finished: Job[];
  receive(message: Jobs): void;
}

export const useJobs = create<JobsState>()((set) => ({
  queued: [],
  running: null,
  finished: [],
  receive(message) {
    set({ queued: message.queued, running: message.running, finished: message.finished });
  },
}));
