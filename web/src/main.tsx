// Entry point: mounts the editor, or an app's pages (/apps, /app/WORKFLOW).

import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import '@xyflow/react/dist/style.css';
import './styles/base.css';
import './styles/node.css';
import './styles/panels.css';
import { App } from './App';
import { AppShell } from './apps/AppShell';
import { pageOf } from './apps/route';

const root = document.getElementById('root');
const page = pageOf(window.location);
if (root) {
  createRoot(root).render(<StrictMode>{page.kind === 'editor' ? <App /> : <AppShell page={page} />}</StrictMode>);
}
