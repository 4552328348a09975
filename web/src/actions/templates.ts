// Creating a workflow from a template: the server writes it (and the sample data it reads),
// then it opens as any file does.

import { createTemplateFile } from '../api/templates';
import { useFiles } from '../store/files';
import { useTemplates } from '../store/templates';
import { useUi } from '../store/ui';
import { failed, leaveOpenFile, openFile, withJson } from './files';

/** Writes template `template` as `name` in the workflows folder and opens it; whether it did.
 * `fill`: `name` is the open file, which has no nodes: the template fills it. */
export async function createFromTemplate(template: string, name: string, fill = false): Promise<boolean> {
  const path = withJson(name);
  if (!fill && useFiles.getState().files.some((f) => f.path === path)) {
    useUi.getState().notify(`${path} exists already; choose another name`, 'error');
    return false;
  }
  if (!(await leaveOpenFile(path))) return false;
  try {
    const created = await createTemplateFile(template, path, fill);
    await useFiles.getState().refresh();
    if (!(await openFile(created.path))) return false;
    useTemplates.getState().show(false);
    const samples = created.samples.length ? `; its sample data: ${created.samples.join(', ')}` : '';
    const made = fill ? `Filled ${created.path} with` : `Created ${created.path} from`;
    useUi.getState().notify(`${made} the template ${template}${samples}`);
    return true;
  } catch (error) {
    failed(error);
    return false;
  }
}
