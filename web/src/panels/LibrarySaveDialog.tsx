// "Save to library": the file name for a component (its title as a file name by default), with
// why a name cannot be used, and a name the library has already refused unless overwritten.

import { useEffect, useRef, useState } from 'react';
import { libraryNames, saveToLibrary } from '../actions/components';
import { useCatalog } from '../store/catalog';
import { useEditor } from '../store/editor';
import { useLibrarySave } from '../store/librarySave';
import { componentNameProblem } from '../workflow/components';

export function LibrarySaveDialog() {
  const node = useLibrarySave((s) => s.node);
  return node ? <NameForm node={node} /> : null;
}

function NameForm({ node }: { node: string }) {
  const title = useEditor((s) => {
    const found = s.nodes.find((n) => n.id === node);
    return (found?.type === 'graph' && found.data.label) || node;
  });
  const { name, refused, type, close } = useLibrarySave();
  useCatalog((s) => s.catalog); // the names taken follow the library
  const [saving, setSaving] = useState(false);
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => field.current?.select(), []);
  const problem = componentNameProblem(name);
  const taken = !problem && libraryNames().has(name);
  const file = `components/${name}.json`;
  const save = async (overwrite: boolean): Promise<void> => {
    if (problem || (taken && !overwrite) || saving) return;
    setSaving(true);
    const done = await saveToLibrary(node, name, overwrite);
    setSaving(false);
    if (done) close();
  };
  return (
    <div className="gb-dialog-backdrop" onMouseDown={(e) => e.target === e.currentTarget && close()}>
      <form
        className="gb-dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby="gb-library-save-title"
        onKeyDown={(e) => {
          e.stopPropagation();
          if (e.key === 'Escape') close();
        }}
        onSubmit={(e) => {
          e.preventDefault();
          void save(false);
        }}
      >
        <h2 id="gb-library-save-title">Save “{title}” to the library</h2>
        <p>
          It appears in the palette under Components, and this node then uses the library file: edits to the file reach
          every workflow that uses it.
        </p>
        <label htmlFor="gb-library-save-name">File name</label>
        <div className="gb-library-name">
          <span>components/</span>
          <input
            id="gb-library-save-name"
            ref={field}
            className={`gb-input${problem || taken ? ' gb-invalid' : ''}`}
            value={name}
            spellCheck={false}
            aria-invalid={!!problem || taken}
            aria-describedby="gb-library-save-why"
            onChange={(e) => type(e.target.value)}
          />
          <span>.json</span>
        </div>
        <p id="gb-library-save-why" className={problem || taken || refused ? 'gb-dialog-problem' : 'gb-dialog-note'}>
          {problem ??
            (refused ||
              (taken
                ? `${file} is in the library already: choose another name, or overwrite it (workflows that use it get yours when next opened)`
                : `saved as ${file}`))}
        </p>
        <div className="gb-dialog-choices">
          {taken ? (
            <button type="button" className="gb-button gb-danger" disabled={saving} onClick={() => void save(true)}>
              Overwrite
            </button>
          ) : null}
          <button type="submit" className="gb-button gb-primary" disabled={!!problem || taken || saving}>
            Save
          </button>
          <button type="button" className="gb-button" onClick={close}>
            Cancel
          </button>
        </div>
      </form>
    </div>
  );
}
