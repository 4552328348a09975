// Opening, saving, creating, renaming and deleting workflow files: the API plus the stores.

import { ApiError } from '../api/http';
import { fetchLastRun } from '../api/runs';
import { deleteWorkflowFile, readWorkflowFile, renameWorkflowFile, writeWorkflowFile } from '../api/workflows';
import type { WorkflowChanged, WorkflowDocument } from '../protocol';
import { useDialog } from '../store/dialog';
import { pendingLibraryEdits } from '../store/inside';
import { workflowKey } from '../store/document';
import { currentKey, currentWorkflow, useEditor } from '../store/editor';
import { useFiles } from '../store/files';
import { usePastRuns } from '../store/pastRuns';
import { runOf, useRun } from '../store/run';
import { runFromSnapshot } from '../store/runState';
import { forgetLegacyGroups, legacyGroups, moveLegacyGroups } from '../store/layout';
import { useConsole } from '../store/console';
import { useUi } from '../store/ui';
import { type Workflow, dumps } from '../workflow/format';
import { readWorkflowData } from '../workflow/load';

const LAST_FILE = 'graphbook.lastFile';

export function rememberedFile(): string | null {
  const fromHash = decodeURIComponent(location.hash.replace(/^#\/?/, ''));
  if (fromHash) return fromHash;
  try {
    return localStorage.getItem(LAST_FILE);
  } catch {
    return null;
  }
}

function remember(path: string | null): void {
  try {
    if (path) localStorage.setItem(LAST_FILE, path);
    else localStorage.removeItem(LAST_FILE);
  } catch {
    /* not remembered across reloads, that is all */
  }
  const hash = path ? `#${encodeURI(path)}` : '';
  if (location.hash !== hash) history.replaceState(null, '', `${location.pathname}${location.search}${hash}`);
}

export function failed(error: unknown): void {
  useUi.getState().notify((error as Error).message, 'error');
}

/** The file's workflow, taking over the groups this browser kept for it if the file has none. */
function withLegacyGroups(workflow: Workflow, path: string): Workflow {
  if (workflow.groups?.length) {
    forgetLegacyGroups(path);
    return workflow;
  }
  const groups = legacyGroups(path);
  return groups.length ? { ...workflow, groups } : workflow;
}

/**
 * Puts `document` on the canvas and the canvas in front: a past run opened over it gives way,
 * however the file was opened (the Workflows tab, the address, a new or dropped file). With
 * `keepView` (the open file reloaded after a change on disk) the view and the run page stay.
 */
function show(document: WorkflowDocument, keepView = false): void {
  const { workflow } = readWorkflowData(document.workflow, document.path);
  const format = document.source_format === 'graphbook0' ? 'graphbook013' : 'canonical';
  const shown = withLegacyGroups(workflow, document.path);
  const switched = useEditor.getState().file?.path !== document.path;
  // The console is the open workflow's: another's lines go, unless its run is the live one.
  if (switched && useRun.getState().run?.workflow !== document.path) useConsole.getState().clear();
  useEditor.getState().open({ path: document.path, format, hash: document.hash }, shown, keepView);
  // Groups taken over from this browser are not in the file yet: unsaved until the next save.
  if (shown !== workflow) useEditor.setState({ savedKey: workflowKey(workflow) });
  useUi.getState().setServerProblems(document.problems);
  if (!keepView) {
    useUi.getState().inspect(null);
    usePastRuns.getState().close();
  }
  remember(document.path);
  void showLastRun(document.path);
}

/** With no file open: the one open before the page was loaded, else the first in the folder. */
let opening: Promise<void> | null = null;

export function openInitialFile(): Promise<void> {
  opening ??= (async () => {
    if (useEditor.getState().file) return;
    const remembered = rememberedFile();
    const files = useFiles.getState().files;
    const first = remembered && files.some((f) => f.path === remembered) ? remembered : files[0]?.path;
    if (first) await openFile(first);
    else useUi.getState().setSide('files');
  })().finally(() => {
    opening = null;
  });
  return opening;
}

export async function openFile(path: string, keepView = false): Promise<boolean> {
  try {
    show(await readWorkflowFile(path), keepView);
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) remember(null);
    failed(error);
    return false;
  }
}

/** Keys of documents this page is writing: the server's word that it wrote one is this page's own save. */
const saving = new Set<string>();

/**
 * The server wrote `path` (an agent's edit through MCP, another tab's save). The open file takes
 * the new content as one undo step (Ctrl+Z brings back what was on the canvas); this page's own
 * saves, and content the canvas shows already, change nothing but the hash.
 */
export function applyServerChange(message: WorkflowChanged): void {
  const editor = useEditor.getState();
  if (editor.file?.path !== message.path || editor.file.hash === message.hash) return;
  const { workflow } = readWorkflowData(message.workflow, message.path);
  const key = workflowKey(workflow);
  if (saving.has(key)) return; // the reply to the save brings the hash
  if (key === currentKey(editor)) editor.markSaved(key, message.hash);
  else editor.replaceDocument(workflow, message.hash);
}

/** The last save asked for: saves go one after another, each from the hash the one before got. */
let saves: Promise<unknown> = Promise.resolve();

/**
 * Writes the open document; `auto` saves never overwrite a file changed by someone else. A save
 * asked for while another is writing (Ctrl+S as autosave fires) waits for it: sent at once, both
 * would name the same base hash and the second would be refused as a change made elsewhere.
 */
export function saveFile(auto = false): Promise<boolean> {
  const next = saves.then(() => writeOpenDocument(auto));
  saves = next.catch(() => undefined);
  return next;
}

async function writeOpenDocument(auto: boolean): Promise<boolean> {
  const editor = useEditor.getState();
  const file = editor.file;
  if (!file) return false;
  const key = currentKey(editor);
  const { workflow } = currentWorkflow(editor);
  saving.add(key);
  try {
    const body: unknown = JSON.parse(dumps(workflow));
    let written: WorkflowDocument;
    try {
      written = await writeWorkflowFile(file.path, body, file.hash);
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 409)) throw error;
      const choice = await askAboutConflict(file.path, auto);
      if (choice === 'reload') return openFile(file.path, true).then(() => false);
      if (choice === 'save-as') return saveCopy(body);
      if (choice !== 'overwrite') throw error;
      written = await writeWorkflowFile(file.path, body);
    }
    forgetLegacyGroups(file.path);
    useEditor.getState().markSaved(key, written.hash);
    if (!auto) notePendingLibraryEdits(editor);
    // Changed while it was being written: its problems are of a document no longer shown.
    if (currentKey(useEditor.getState()) === key) useUi.getState().setServerProblems(written.problems);
    return true;
  } catch (error) {
    failed(error);
    return false;
  } finally {
    saving.delete(key);
  }
}

/** Saved while inside an edited library component: its edits went into the workflow as a copy. */
function notePendingLibraryEdits(editor: Parameters<typeof pendingLibraryEdits>[0]): void {
  const files = pendingLibraryEdits(editor).map((name) => `components/${name}.json`);
  if (!files.length) return;
  useUi
    .getState()
    .notify(
      `Saved; your edits to ${files.join(', ')} are a copy in this workflow for now: go back out (the path above the canvas) to update the library file or keep the copy`,
    );
}

/** The file changed elsewhere since this page opened it (another tab's save): what now? */
function askAboutConflict(path: string, auto: boolean): Promise<string> {
  return useDialog.getState().ask({
    title: `${path} changed elsewhere`,
    text: `${auto ? 'Autosave did not write your changes: ' : ''}${path} was saved by another window or program since it was opened here. Reload it (your changes here are lost), overwrite it with your version, or save your version as a new file.`,
    choices: [
      { value: 'reload', label: 'Reload' },
      { value: 'overwrite', label: 'Overwrite', primary: true },
      { value: 'save-as', label: 'Save as new file' },
      { value: 'cancel', label: 'Cancel' },
    ],
  });
}

/** Writes `body` (the open document) to a free name beside the open file, and opens it there. */
async function saveCopy(body: unknown): Promise<boolean> {
  const path = freeName(useEditor.getState().file?.path ?? 'untitled.json');
  show(await writeWorkflowFile(path, body), true);
  await useFiles.getState().refresh();
  useUi.getState().notify(`Saved your version as ${path}`);
  return true;
}

/**
 * Whether the open document may be left for `next` (another file, a new one): with nothing
 * unsaved, yes; with autosave on, once it is saved; otherwise the person says whether to save
 * it, discard the changes, or stay. A Graphbook 0.13 file is never saved without asking.
 */
export async function leaveOpenFile(next: string): Promise<boolean> {
  const editor = useEditor.getState();
  const file = editor.file;
  if (!file || currentKey(editor) === editor.savedKey) return true;
  const autosaved = useUi.getState().autosave && file.format === 'canonical';
  if (autosaved && (await saveFile())) return true;
  const answer = await useDialog.getState().ask({
    title: autosaved ? `${file.path} could not be saved` : `Save the changes to ${file.path}?`,
    text: autosaved
      ? `Open ${next} anyway and lose the changes made here?`
      : `Autosave is off and ${file.path} has changes that are not saved. Save them before opening ${next}?`,
    choices: [
      ...(autosaved ? [] : [{ value: 'save', label: 'Save', primary: true }]),
      { value: 'discard', label: autosaved ? 'Lose the changes' : "Don't save" },
      { value: 'cancel', label: 'Cancel' },
    ],
  });
  if (answer === 'save') return saveFile();
  return answer === 'discard';
}

/** Opens another file (or shows the open one's canvas), first asking what to do with unsaved changes (see `leaveOpenFile`). */
export async function switchFile(path: string): Promise<boolean> {
  if (path === useEditor.getState().file?.path) {
    usePastRuns.getState().close();
    return true;
  }
  if (!(await leaveOpenFile(path))) {
    remember(useEditor.getState().file?.path ?? null);
    return false;
  }
  return openFile(path);
}

export function withJson(name: string): string {
  const clean = name.trim().replace(/^\/+/, '');
  return clean.endsWith('.json') ? clean : `${clean}.json`;
}

export async function createFile(name: string): Promise<void> {
  const path = withJson(name);
  if (useFiles.getState().files.some((f) => f.path === path)) {
    useUi.getState().notify(`${path} exists already; choose another name`, 'error');
    return;
  }
  if (!(await leaveOpenFile(path))) return;
  try {
    show(await writeWorkflowFile(path, JSON.parse(dumps({ doc: '', nodes: [], edges: [] }))));
    await useFiles.getState().refresh();
  } catch (error) {
    failed(error);
  }
}

export async function renameFile(path: string, to: string): Promise<void> {
  const target = withJson(to);
  if (target === path) return;
  try {
    const document = await renameWorkflowFile(path, target);
    moveLegacyGroups(path, document.path);
    const editor = useEditor.getState();
    if (editor.file?.path === path) {
      useEditor.setState({ file: { ...editor.file, path: document.path, hash: document.hash } });
      remember(document.path);
    }
    await useFiles.getState().refresh();
  } catch (error) {
    failed(error);
  }
}

export async function deleteFile(path: string): Promise<void> {
  try {
    await deleteWorkflowFile(path);
    forgetLegacyGroups(path);
    if (useEditor.getState().file?.path === path) {
      useEditor.getState().close();
      remember(null);
    }
    await useFiles.getState().refresh();
  } catch (error) {
    failed(error);
  }
}

/** `name`, or `stem-2.json`, `stem-3.json`... if the folder has it already. */
export function freeName(name: string): string {
  const taken = new Set(useFiles.getState().files.map((f) => f.path));
  const path = withJson(name.split(/[\\/]/).pop() ?? name);
  const stem = path.slice(0, -5);
  let candidate = path;
  for (let n = 2; taken.has(candidate); n++) candidate = `${stem}-${n}.json`;
  return candidate;
}

/**
 * Adds a workflow file dropped on the page (ours or Graphbook 0.13's) to the workflows folder,
 * under its own name or a free one beside it, and opens it. A Graphbook 0.13 file is written
 * in the current format (the server converts it); the file dropped is not changed.
 */
export async function importFile(name: string, text: string): Promise<void> {
  let data: unknown;
  try {
    data = JSON.parse(text);
    readWorkflowData(data, name);
  } catch (error) {
    useUi.getState().notify(`${name} is not a workflow: ${(error as Error).message}`, 'error');
    return;
  }
  const path = freeName(name);
  if (!(await leaveOpenFile(path))) return;
  try {
    show(await writeWorkflowFile(path, data));
    await useFiles.getState().refresh();
    useUi
      .getState()
      .notify(path === withJson(name) ? `Imported ${path}` : `Imported ${name} as ${path} (${withJson(name)} exists)`);
  } catch (error) {
    failed(error);
  }
}

/**
 * Shows the last run of the workflow at `path` when this page has not seen one (after a reload,
 * or when the server ran it for another page): from the server's view, or its run store.
 */
export async function showLastRun(path: string): Promise<void> {
  if (runOf(useRun.getState(), path)) return;
  try {
    const last = await fetchLastRun(path);
    if (last.run) useRun.getState().keep(runFromSnapshot(last.run));
  } catch {
    // Nothing to show: the nodes stay as they are (not run).
  }
}
