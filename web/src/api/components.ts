// The library of components (`components/` beside the workflows folder) through the HTTP API.

import type { ComponentDocument } from '../protocol';
import { encodePath, request } from './http';

const url = (name: string): string => `/api/components/${encodePath(name)}.json`;

export const readComponent = (name: string): Promise<ComponentDocument> => request('GET', url(name));
/** Writes `components/NAME.json`; with `ifMatch` (a version, or "" for no file yet) only if the
 * file is still that one (409 otherwise, saying what it is now). */
export const writeComponent = (name: string, component: unknown, ifMatch?: string): Promise<ComponentDocument> =>
  request('PUT', url(name), component, ifMatch === undefined ? {} : { 'If-Match': `"${ifMatch}"` });
