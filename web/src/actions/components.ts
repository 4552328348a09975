// Components on the canvas: make one from the selection, save one to the library, unpack one.

import { writeComponent } from '../api/components';
import { useCatalog } from '../store/catalog';
import { useEditor } from '../store/editor';
import { openable } from '../store/inside';
import { useLibrary } from '../store/library';
import { freshId } from '../store/ids';
import { useUi } from '../store/ui';
import { LIBRARY_PREFIX, bodyOf, libraryFile, libraryOf } from '../workflow/components';
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

/** Writes the inline component `id` to `components/NAME.json` (named after its title), and makes
 * the node refer to it there, so the palette offers it and edits to the file reach this node. */
export async function saveToLibrary(id: string): Promise<void> {
  const node = componentNode(id);
  if (!node?.data.component || libraryOf(node.data.component)) return;
  const taken = new Set(
    Object.keys(useCatalog.getState().catalog.nodes)
      .filter((n) => n.startsWith(LIBRARY_PREFIX))
      .map((n) => n.slice(LIBRARY_PREFIX.length)),
  );
  const name = freshId(node.data.label || id, taken);
  try {
    const saved = await writeComponent(name, libraryFile(node.data.component));
    useEditor.getState().setComponent(id, { library: saved.name, version: saved.version });
    await useCatalog.getState().load();
    useUi.getState().notify(`Saved to the library as components/${saved.name}.json`);
  } catch (error) {
    failed(error);
  }
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
  if (body) useEditor.getState().openComponent(id, body);
  else
    useUi
      .getState()
      .notify(`cannot open ${id}: its library file components/${library?.library ?? ''}.json does not read`, 'error');
}
