// Which node's outputs the results gallery shows, if it is open.

import { create } from 'zustand';
import { useEditor } from './editor';

export interface GalleryTarget {
  /** The workflow open when the gallery was (it closes on a switch to another). */
  workflow: string;
  node: string;
  output: string;
}

interface GalleryState {
  target: GalleryTarget | null;
  openGallery(node: string, output?: string): void;
  closeGallery(): void;
}

export const useGallery = create<GalleryState>()((set) => ({
  target: null,
  openGallery(node, output = 'out') {
    set({ target: { workflow: useEditor.getState().file?.path ?? '', node, output } });
  },
  closeGallery() {
    set({ target: null });
  },
}));
