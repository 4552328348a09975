// "Save to library": the file name for a component (its title as a file name by default), with
// why a name cannot be used, and a name the library has already refused unless overwritten.

import { useEffect, useRef, useState } from 'react';
import { libraryNames, saveToLibrary } from '../actions/components';
import { useCatalog } from '../store/catalog';
import { useEditor } from '../store/editor';
import { useLibrarySave } from '../store/librarySave';
import { componentNameProblem } from '../workflow/components';
import { Backdrop } from '../widgets/Backdrop';

export function LibrarySaveDialog() {
  const node = useLibrarySave((s) => s.node);
  return node ? <NameForm node={node} /> : null;
}

interface NameState {
  name: string;
  problem: string | null;
  taken: boolean;
  refused: string | null | undefined;
}

/** The dialog's state: the name typed, why it cannot be used, and saving it. */
function useNameForm(node: string) {
  const { name, refused, type, close } = useLibrarySave();
  useCatalog((s) => s.catalog); // the names taken follow the library
  const [saving, setSaving] = useState(false);
  const problem = componentNameProblem(name);
  const taken = !problem && libraryNames().has(name);
  const save = async (overwrite: boolean): Promise<void> => {
    if (problem || (taken && !overwrite) || saving) return;
    setSaving(true);
    const done = await saveToLibrary(node, name, overwrite);
    setSaving(false);
    if (done) close();
  };
  return { state: { name, problem, taken, refused }, type, close, saving, save };
}

function NameForm({ node }: { node: string }) {
  const title = useEditor((s) => {
    const found = s.nodes.find((n) => n.id === node);
    return (found?.type === 'graph' && found.data.label) || node;
  });
  const { state, type, close, saving, save } = useNameForm(node);
  return (
    <Backdrop onClose={close}>
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
        <NameField state={state} type={type} />
        <div className="gb-dialog-choices">
          {state.taken ? (
            <button type="button" className="gb-button gb-danger" disabled={saving} onClick={() => void save(true)}>
              Overwrite
            </button>
          ) : null}
          <button type="submit" className="gb-button gb-primary" disabled={!!state.problem || state.taken || saving}>
            Save
          </button>
          <button type="button" className="gb-button" onClick={close}>
            Cancel
          </button>
        </div>
      </form>
    </Backdrop>
  );
}

/** The file name field, and why the name cannot be used (or where it is saved). */
function NameField({ state, type }: { state: NameState; type(name: string): void }) {
  const { name, problem, taken, refused } = state;
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => field.current?.select(), []);
  const file = `components/${name}.json`;
  return (
    <>
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
    </>
  );
}
