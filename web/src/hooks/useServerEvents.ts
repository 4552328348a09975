// One websocket for the page: run events into the run store; catalog and folder changes refetch.

import { useEffect } from 'react';
import { applyServerChange, openFile, openInitialFile } from '../actions/files';
import { openSocket, socketUrl } from '../api/socket';
import { readWorkflowFile } from '../api/workflows';
import type { ServerMessage } from '../protocol';
import { catalogLoading, useCatalog } from '../store/catalog';
import { useConsole } from '../store/console';
import { currentKey, useEditor } from '../store/editor';
import { useFiles } from '../store/files';
import { useJobs } from '../store/jobs';
import { useLibrary } from '../store/library';
import { useRun } from '../store/run';
import { useUi } from '../store/ui';

async function reloadIfChangedElsewhere(path: string): Promise<void> {
  const editor = useEditor.getState();
  if (editor.file?.path !== path || currentKey(editor) !== editor.savedKey) return;
  const latest = await readWorkflowFile(path).catch(() => null);
  // Another file may have been opened meanwhile (this page's own save, then a switch).
  const now = useEditor.getState().file;
  if (latest && now?.path === path && latest.hash !== now.hash) await openFile(path, true);
}

/** Hellos so far: the first comes as the page loads, which fetches the catalog and files itself. */
let hellos = 0;
/** The server process the last hello came from: another one (a restart) shares nothing with it. */
let instance: string | null = null;

/** A hello: from the same server, the folder may have changed meanwhile; from a new server (its
 * instance id differs), its catalog versions count from its own start, so everything is fetched. */
function greeted(message: Extract<ServerMessage, { type: 'hello' }>): void {
  const restarted = instance !== null && message.instance !== instance;
  instance = message.instance;
  const { catalog, loaded } = useCatalog.getState();
  // A fetch under way (the page's first) brings the current version already.
  const stale = restarted || message.catalog_version !== catalog.version || !loaded;
  if (stale && (restarted || !catalogLoading())) void useCatalog.getState().load();
  if (hellos++ === 0) return;
  void useFiles.getState().refresh().then(openInitialFile);
  const open = useEditor.getState().file?.path;
  if (restarted && open) void reloadIfChangedElsewhere(open);
}

/**
 * Run and console messages wait for the next frame and are folded together: a run streaming
 * thousands of messages a second costs the page one render per frame, not one per message
 * (bench/frames.py). A hidden tab, which gets no frames, still folds them every 100 ms.
 */
let waiting: ServerMessage[] = [];
let flushing = false;

function fold(): void {
  flushing = false;
  const messages = waiting;
  waiting = [];
  if (!messages.length) return;
  useRun.getState().receiveAll(messages);
  useConsole.getState().receiveAll(messages);
}

function foldSoon(message: ServerMessage): void {
  waiting.push(message);
  if (flushing) return;
  flushing = true;
  requestAnimationFrame(fold);
  setTimeout(fold, 100);
}

function route(message: ServerMessage): void {
  if (message.type === 'jobs') {
    useJobs.getState().receive(message);
    return;
  }
  foldSoon(message);
  // A joining page's whole state: shown at once, with what waited before it, not a frame later.
  if (message.type === 'snapshot') fold();
  if (message.type === 'hello') greeted(message);
  if (message.type === 'catalog_changed' && message.version !== useCatalog.getState().catalog.version) {
    void useCatalog.getState().load();
    useLibrary.getState().forget();
  }
  // The server could not record runs in its store: say so (runs go on, unrecorded).
  if (message.type === 'error' && message.code === 'store_failed') useUi.getState().notify(message.message, 'error');
  if (message.type === 'workflow_changed') applyServerChange(message);
  // Files added to or removed from the folder outside the server (a copy, a file manager).
  if (message.type === 'workflows_listed') void useFiles.getState().refresh();
  if (message.type === 'workflows_changed') {
    void useFiles.getState().refresh();
    if (message.action === 'saved') void reloadIfChangedElsewhere(message.path);
  }
}

export function useServerEvents(): void {
  useEffect(
    () =>
      openSocket(socketUrl(window.location), {
        message: route,
        state: (state) => useRun.getState().setConnection(state),
      }),
    [],
  );
}
