// Templates through the HTTP API: list them, and create one as a file in the workflows folder.

import type { TemplateCreated, TemplateList } from '../protocol';
import { request } from './http';

export const listTemplates = (): Promise<TemplateList> => request('GET', '/api/templates');

/** Writes template `name` as `path` (relative to the workflows folder), with the sample data it reads. */
export const createTemplateFile = (name: string, path: string): Promise<TemplateCreated> =>
  request('POST', `/api/templates/${encodeURIComponent(name)}`, { path });
