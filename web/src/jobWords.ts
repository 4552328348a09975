// A queued job in words: the parameter values it sets, and how it runs when not plainly.

import type { Job } from './protocol';

/** The parameter values the job sets for its run only, as `node.param=value`. */
export function overridesText(job: Job): string {
  const overrides = job.request.overrides ?? {};
  return Object.entries(overrides)
    .flatMap(([node, params]) =>
      Object.entries(params).map(([name, value]) => `${node}.${name}=${JSON.stringify(value)}`),
    )
    .join(' ');
}

/** Its mode when not `all` (with the node), and whether it runs unsaved edits; '' for a plain run. */
export function howText(job: Job): string {
  const { mode, node } = job.request;
  const parts = [mode !== 'all' ? `${mode}${node ? ` ${node}` : ''}` : '', job.inline ? 'unsaved edits' : ''];
  return parts.filter(Boolean).join(' · ');
}
