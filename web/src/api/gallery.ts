// The results gallery's pages: a node's output dicts filtered and sorted by the server.

import type { GalleryPage } from '../protocol';
import { request } from './http';

export interface GalleryQuery {
  workflow: string;
  node: string;
  output: string;
  /** Clauses `FIELD OP VALUE` joined by `and` (OP: == != < <= > >= contains); '' keeps all. */
  filter: string;
  /** A field to sort by (numbers by value); '' keeps the order they were handed on. */
  sort: string;
  order: 'asc' | 'desc';
}

export function fetchGalleryPage(query: GalleryQuery, offset: number, limit: number): Promise<GalleryPage> {
  const params = new URLSearchParams({ ...query, offset: String(offset), limit: String(limit) });
  if (!query.sort) params.delete('sort');
  if (!query.filter) params.delete('filter');
  return request('GET', `/api/outputs/gallery?${params.toString()}`);
}
