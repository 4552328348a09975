// Components on the canvas: make one from the selection, save one to the library, unpack one.

import { writeComponent } from '../api/components';
import { ApiError } from '../api/http';
import { useCatalog } from '../store/catalog';
import { useEditor } from '../store/editor';
import { openable } from '../store/inside';
import { useLibrary } from '../store/library';
import { useLibrarySave } from '../store/librarySave';
import { useUi } from '../store/ui';
import { LIBRARY_PREFIX, bodyOf, componentFileName, libraryFile, libraryOf } from '../workflow/components';
import type { Json } from '../workflow/format';
import { failed } from './files';

function componentNode(id: string) {
  const node = useEditor.getState().nodes.find((n) => n.id === id);
  return node?.type === 'graph' && node.data.component ? node : null;
}

/** The selected nodes into one component node (one undo step). */
export function makeComponent(): void {
  const id = useEditor.getState().makeComponent();
  if (id) useUi.getState().notify(`Made component ${id}: right-click it to save it to the library or to unpack it`);
}

/** The names the library has (the catalog's `components/NAME` entries). */
export function libraryNames(): Set<string> {
  return new Set(
    Object.keys(useCatalog.getState().catalog.nodes)
      .filter((n) => n.startsWith(LIBRARY_PREFIX))
      .map((n) => n.slice(LIBRARY_PREFIX.length)),
  );
}

/** Asks for the file name to save the inline component `id` under (its title as a file name). */
export function askLibraryName(id: string): void {
  const node = componentNode(id);
  if (!node?.data.component || libraryOf(node.data.component)) return;
  useLibrarySave.getState().open(id, componentFileName(node.data.label || id));
}

/** Writes the inline component `id` to `components/NAME.json` (only if there is no such file,
 * unless `overwrite`), and makes the node refer to it there, so the palette offers it and edits
 * to the file reach this node. False, with the dialog saying why, when it was refused. */
export async function saveToLibrary(id: string, name: string, overwrite: boolean): Promise<boolean> {
  const node = componentNode(id);
  if (!node?.data.component || libraryOf(node.data.component)) return false;
  try {
    const saved = await writeComponent(name, libraryFile(node.data.component), overwrite ? undefined : '');
    useEditor.getState().setComponent(id, { library: saved.name, version: saved.version });
    await refreshLibrary(saved.name);
    useUi.getState().notify(`Saved to the library as components/${saved.name}.json`);
    return true;
  } catch (error) {
    useLibrarySave.getState().refuse((error as Error).message);
    return false;
  }
}

async function refreshLibrary(name: string): Promise<void> {
  await useCatalog.getState().load();
  await useLibrary.getState().load(name);
}

function editedNode(id: string) {
  const node = componentNode(id);
  return node?.data.component && node.data.libraryEdit ? { node, edit: node.data.libraryEdit } : null;
}

/** Writes the edited copy on node `id` over the library file it was opened from, if that file is
 * still the version opened (or regardless, with `overwrite`); the node then refers to the new
 * version. Other workflows that use it get it when they are next opened. */
export async function updateLibrary(id: string, overwrite = false): Promise<void> {
  const found = editedNode(id);
  if (!found?.node.data.component) return;
  const { node, edit } = found;
  const file = `components/${edit.library}.json`;
  try {
    const content = libraryFile(node.data.component as Record<string, Json>);
    const saved = await writeComponent(edit.library, content, overwrite ? undefined : edit.version);
    useEditor.getState().setComponent(id, { library: saved.name, version: saved.version });
    await refreshLibrary(saved.name);
    useUi.getState().notify(`Updated ${file}: workflows that use it get this version when they are next opened`);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 409)) return failed(error);
    const refused = `${file} was changed by someone else since you opened it: overwrite their version with yours, or keep yours as a copy in this workflow`;
    useEditor.getState().setLibraryEdit(id, { ...edit, refused });
    useUi.getState().notify(refused, 'error');
  }
}

/** Keeps the edited copy on node `id` inline in this workflow; the library file stays as it is. */
export function keepCopy(id: string): void {
  const found = editedNode(id);
  if (!found) return;
  useEditor.getState().setLibraryEdit(id, null);
  useUi.getState().notify(`Kept ${id} as a copy in this workflow; components/${found.edit.library}.json is unchanged`);
}

/** The component node `id` back into the plain nodes inside it (one undo step). */
export async function unpackComponent(id: string): Promise<void> {
  const node = componentNode(id);
  if (!node?.data.component) return;
  try {
    const library = libraryOf(node.data.component);
    const component = library ? await useLibrary.getState().load(library.library) : node.data.component;
    if (!component) throw new Error(`cannot read the library component components/${library?.library ?? ''}.json`);
    const body = bodyOf(component);
    if (body) useEditor.getState().unpackComponent(id, body);
  } catch (error) {
    failed(error);
  }
}

/** Shows the nodes inside component node `id` on the canvas (a library one read from the library). */
export async function openComponent(id: string): Promise<void> {
  const node = componentNode(id);
  if (!node?.data.component) return;
  const library = libraryOf(node.data.component);
  const read = library ? await useLibrary.getState().load(library.library) : null;
  const body = openable(node.data.component, read);
  const version = library ? useLibrary.getState().versions[library.library] : undefined;
  if (body) useEditor.getState().openComponent(id, body, version);
  else
    useUi
      .getState()
      .notify(`cannot open ${id}: its library file components/${library?.library ?? ''}.json does not read`, 'error');
}
