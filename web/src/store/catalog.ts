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

/** The fetch under way: a second ask while it runs gets the same one, not a second request. */
let loading: Promise<void> | null = null;

export const useCatalog = create<CatalogState>()((set) => ({
  catalog: EMPTY_CATALOG,
  loaded: false,
  error: null,
  load() {
    loading ??= (async () => {
      try {
        set({ catalog: decodeCatalog(await fetchCatalog()), loaded: true, error: null });
      } catch (error) {
        set({ error: (error as Error).message });
      }
    })().finally(() => {
      loading = null;
    });
    return loading;
  },
}));

/** Whether a fetch of the catalog is under way. */
export const catalogLoading = (): boolean => loading !== null;
