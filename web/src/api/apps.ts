// Apps over HTTP (/api/apps, docs/apps.md): the apps and their forms, a run asked for and
// followed, its results a page at a time, the pickers' folders and uploads.

import type {
  AppInfo,
  AppList,
  AppRun,
  AppRunList,
  AppTablePage,
  BrowseListing,
  GalleryPage,
  Uploaded,
} from '../protocol';
import { ApiError, encodePath, refusal, request } from './http';

const app = (workflow: string): string => `/api/apps/${encodePath(workflow)}`;
const run = (job: string): string => `/api/apps/runs/${encodeURIComponent(job)}`;

export const fetchApps = (): Promise<AppList> => request('GET', '/api/apps');
export const fetchApp = (workflow: string): Promise<AppInfo> => request('GET', app(workflow));
export const previewApp = (workflow: string, graph: unknown): Promise<AppInfo> =>
  request('POST', '/api/apps/preview', { workflow, graph });
export const fetchAppRuns = (workflow: string): Promise<AppRunList> => request('GET', `${app(workflow)}/runs`);

/** Runs the app: refused (ApiError with `fields`) when a value is wrong; nothing is queued then. */
export const runApp = (workflow: string, inputs: Record<string, unknown>): Promise<AppRun> =>
  request('POST', `${app(workflow)}/runs`, { inputs });
export const fetchAppRun = (job: string): Promise<AppRun> => request('GET', run(job));
export const stopAppRun = (job: string): Promise<AppRun> => request('POST', `${run(job)}/stop`);

export interface TableQuery {
  sort: string;
  order: 'asc' | 'desc';
  offset: number;
  limit: number;
}

export function fetchTablePage(job: string, output: string, query: TableQuery): Promise<AppTablePage> {
  const params = new URLSearchParams({ order: query.order, offset: String(query.offset), limit: String(query.limit) });
  if (query.sort) params.set('sort', query.sort);
  return request('GET', `${run(job)}/table/${encodeURIComponent(output)}?${params.toString()}`);
}

export function fetchResultGallery(job: string, output: string, offset: number, limit: number): Promise<GalleryPage> {
  const params = new URLSearchParams({ offset: String(offset), limit: String(limit) });
  return request('GET', `${run(job)}/gallery/${encodeURIComponent(output)}?${params.toString()}`);
}

export function browse(root: string, path: string, kind: string, accept: string[]): Promise<BrowseListing> {
  const params = new URLSearchParams({ root, path, kind, accept: accept.join(',') });
  return request('GET', `/api/apps/browse?${params.toString()}`);
}

/** Uploads `file` for input `input` of the app; refused (ApiError with `fields`) when it is too
 * large or not of a type the input takes. */
export async function uploadFile(workflow: string, input: string, file: File): Promise<Uploaded> {
  const url = `${app(workflow)}/uploads/${encodeURIComponent(input)}?name=${encodeURIComponent(file.name)}`;
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', body: file, credentials: 'same-origin' });
  } catch (error) {
    const message = `the upload did not reach the server (${(error as Error).message})`;
    throw new ApiError(0, 'offline', message, [], { [input]: message });
  }
  const data: unknown = await response.json().catch(() => null);
  if (!response.ok) throw refusal(response, data, `upload ${file.name}`);
  return data as Uploaded;
}
