// On a library component edited in place: it now differs from its library file, and the two
// ways on (update the file, which every workflow using it gets, or keep the copy in this one).

import { keepCopy, updateLibrary } from '../actions/components';
import type { LibraryEdit } from '../workflow/flow';

export function LibraryEditBar({ id, edit }: { id: string; edit: LibraryEdit }) {
  const file = `components/${edit.library}.json`;
  return (
    <div
      className={`gb-library-edit nodrag${edit.refused ? ' gb-refused' : ''}`}
      role="group"
      aria-label={`${id} differs from ${file}`}
    >
      <p>{edit.refused ?? `Edited here: differs from ${file}.`}</p>
      <div className="gb-library-edit-choices">
        {edit.refused ? (
          <button className="gb-button gb-danger" onClick={() => void updateLibrary(id, true)}>
            Overwrite {file}
          </button>
        ) : (
          <button
            className="gb-button gb-primary"
            title="write these edits to the library file; other workflows get them when next opened"
            onClick={() => void updateLibrary(id)}
          >
            Update {file}
          </button>
        )}
        <button className="gb-button" title="leave the library file as it is" onClick={() => keepCopy(id)}>
          Keep as a copy in this workflow
        </button>
      </div>
    </div>
  );
}
