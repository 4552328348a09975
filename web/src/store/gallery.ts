// Which node's outputs the results gallery shows, if it is open.

import { create } from 'zustand';

export interface GalleryTarget {
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
    set({ target: { node, output } });
  },
  closeGallery() {
    set({ target: null });
  },
}));
