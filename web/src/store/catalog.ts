// The node catalog store: fetched at start and again whenever a node file changes.

import { create } from 'zustand';
import { fetchCatalog } from '../api/runs';
import { type Catalog, EMPTY_CATALOG, decodeCatalog } from '../catalog';

export interface CatalogState {
  catalog: Catalog;
  loaded: boolean;
  error: string | null;
  load(): Promise<void>;
}

export const useCatalog = create<CatalogState>()((set) => ({
  catalog: EMPTY_CATALOG,
  loaded: false,
  error: null,
  async load() {
    try {
      set({ catalog: decodeCatalog(await fetchCatalog()), loaded: true, error: null });
    } catch (error) {
      set({ error: (error as Error).message });
    }
  },
}));
