// Where a batch step's time went (the engine's graphbook.engine.timing): running its batches against waiting
// for their input; on a GPU, how long the device sat idle.

import type { BatchTiming } from './protocol';
import { formatSeconds } from './preview';

/** The share of a batch step's time it waited for input: on a GPU, the share the device sat idle. */
export function waitFigure(timing: BatchTiming): string {
  const total = timing.compute + timing.waited;
  if (total <= 0) return '';
  if (timing.device_busy !== null && timing.device) {
    return `GPU idle ${Math.round(Math.max(0, 1 - timing.device_busy / total) * 100)}%`;
  }
  return `waited ${Math.round((timing.waited / total) * 100)}%`;
}

/** Where a batch step's time went, in a sentence (the footer's tooltip, the run page). */
export function timingText(timing: BatchTiming): string {
  const total = timing.compute + timing.waited;
  const share = total > 0 ? Math.round((timing.waited / total) * 100) : 0;
  const batches = `${timing.batches} batch${timing.batches === 1 ? '' : 'es'}`;
  let text =
    `${batches}: ${formatSeconds(timing.compute)} running them, ` +
    `${formatSeconds(timing.waited)} waiting for input (${share}% of its time)`;
  if (timing.device_busy !== null && timing.device && total > 0) {
    const idle = Math.round(Math.max(0, 1 - timing.device_busy / total) * 100);
    text += `; ${timing.device} idle ${idle}%`;
  }
  return text;
}
