// Builds the app into the Python package (graphbook/webapp/), which the server serves.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: here('.'),
  base: './',
  plugins: [react()],
  build: {
    outDir: here('../graphbook/webapp'),
    emptyOutDir: true,
    chunkSizeWarningLimit: 1024,
  },
  server: {
    proxy: { '/api': 'http://127.0.0.1:8005', '/ws': { target: 'ws://127.0.0.1:8005', ws: true } },
  },
});
