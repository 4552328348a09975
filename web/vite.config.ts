// Builds the app into the Python package (graphbook/webapp/), which the server serves; every
// text asset also gets .gz and .br twins, which the server sends to browsers that accept them.
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { type Plugin, defineConfig } from 'vite';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));
const outDir = here('../graphbook/webapp');

function files(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

/** Writes NAME.gz and NAME.br beside each built text file over 1 KiB. */
function precompress(): Plugin {
  return {
    name: 'graphbook-precompress',
    apply: 'build',
    closeBundle() {
      for (const path of files(outDir).filter((p) => /\.(js|css|html|svg|json)$/.test(p))) {
        const data = readFileSync(path);
        if (data.length < 1024) continue;
        writeFileSync(`${path}.gz`, gzipSync(data, { level: 9 }));
        writeFileSync(`${path}.br`, brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
      }
    },
  };
}

export default defineConfig({
  root: here('.'),
  base: './',
  plugins: [react(), precompress()],
  build: {
    outDir,
    emptyOutDir: true,
    chunkSizeWarningLimit: 1024,
  },
  server: {
    proxy: { '/api': 'http://127.0.0.1:8005', '/ws': { target: 'ws://127.0.0.1:8005', ws: true } },
  },
});
