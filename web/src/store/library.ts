// The library components' insides the page has read (GET /api/components/NAME.json), by name:
// what a library component node's ports lead to, so its counts are those of the nodes inside.

import { create } from 'zustand';
import { readComponent } from '../api/components';
import type { Json } from '../workflow/format';

interface LibraryState {
  /** Name -> the component's inside, at the version last read. */
  bodies: Record<string, Record<string, Json>>;
  /** Name -> the version last read (its file's digest, 12 hex digits). */
  versions: Record<string, string>;
  /** Reads `name` (again); null when it cannot be read (its node shows the server's problem). */
  load(name: string): Promise<Record<string, Json> | null>;
  /** Forgets what was read: the catalog changed, so the library may have. */
  forget(): void;
}

const loading = new Map<string, Promise<Record<string, Json> | null>>();

export const useLibrary = create<LibraryState>()((set, get) => ({
  bodies: {},
  versions: {},
  load(name) {
    const pending = loading.get(name);
    if (pending) return pending;
    const read = readComponent(name)
      .then((document) => {
        const body = document.component as Record<string, Json>;
        set({
          bodies: { ...get().bodies, [name]: body },
          versions: { ...get().versions, [name]: document.version },
        });
        return body;
      })
      .catch(() => null)
      .finally(() => loading.delete(name));
    loading.set(name, read);
    return read;
  },
  forget() {
    set({ bodies: {}, versions: {} });
  },
}));
