// The "Save to library" question: which component node, the file name typed so far, and why the
// last try was refused (the server's words), until it is saved or cancelled.

import { create } from 'zustand';

interface LibrarySaveState {
  /** The component node being saved; null while the dialog is closed. */
  node: string | null;
  name: string;
  refused: string;
  open(node: string, name: string): void;
  type(name: string): void;
  refuse(message: string): void;
  close(): void;
}

export const useLibrarySave = create<LibrarySaveState>()((set) => ({
  node: null,
  name: '',
  refused: '',
  open: (node, name) => set({ node, name, refused: '' }),
  type: (name) => set({ name, refused: '' }),
  refuse: (refused) => set({ refused }),
  close: () => set({ node: null, name: '', refused: '' }),
}));
