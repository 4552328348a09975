// Templates through the HTTP API: list them, and create one as a file in the workflows folder.

import type { TemplateCreated, TemplateList } from '../protocol';
import { request } from './http';

export const listTemplates = (): Promise<TemplateList> => request('GET', '/api/templates');

/** Writes template `name` as `path` (relative to the workflows folder), with the sample data it
 * reads; `fill`: `path` may be a workflow file with no nodes, which the template fills. */
export const createTemplateFile = (name: string, path: string, fill = false): Promise<TemplateCreated> =>
  request('POST', `/api/templates/${encodeURIComponent(name)}`, fill ? { path, fill } : { path });
