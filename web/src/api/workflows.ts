// The workflows folder through the HTTP API: list, read, write, rename, delete.

import type { WorkflowDocument, WorkflowList } from '../protocol';
import { encodePath, request } from './http';

const url = (path: string): string => `/api/workflows/${encodePath(path)}`;

export const listWorkflows = (): Promise<WorkflowList> => request('GET', '/api/workflows');
export const readWorkflowFile = (path: string): Promise<WorkflowDocument> => request('GET', url(path));

export function writeWorkflowFile(path: string, workflow: unknown, hash?: string): Promise<WorkflowDocument> {
  return request('PUT', url(path), workflow, hash ? { 'If-Match': hash } : {});
}

export const renameWorkflowFile = (path: string, to: string): Promise<WorkflowDocument> =>
  request('PATCH', url(path), { path: to });
export const deleteWorkflowFile = (path: string): Promise<void> => request('DELETE', url(path));
