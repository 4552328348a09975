// The library of components (`components/` beside the workflows folder) through the HTTP API.

import type { ComponentDocument } from '../protocol';
import { encodePath, request } from './http';

const url = (name: string): string => `/api/components/${encodePath(name)}.json`;

export const readComponent = (name: string): Promise<ComponentDocument> => request('GET', url(name));
export const writeComponent = (name: string, component: unknown): Promise<ComponentDocument> =>
  request('PUT', url(name), component);
