// The picker behind a path input's Browse: the server's folders (its roots, never elsewhere),
// a folder at a time; a folder input takes the folder shown, a file or image input a file in it.

import { useEffect, useState } from 'react';
import { browse } from '../api/apps';
import type { BrowseListing } from '../protocol';
import { Backdrop } from '../widgets/Backdrop';

interface Props {
  kind: string;
  accept: string[];
  onPick(path: string): void;
  onClose(): void;
}

interface Place {
  root: string;
  path: string;
}

function useListing(place: Place, kind: string, accept: string[]) {
  const [listing, setListing] = useState<BrowseListing | null>(null);
  const [error, setError] = useState('');
  const wanted = accept.join(',');
  useEffect(() => {
    let live = true;
    browse(place.root, place.path, kind, wanted ? wanted.split(',') : [])
      .then((found) => live && (setListing(found), setError('')))
      .catch((e: Error) => live && setError(e.message));
    return () => {
      live = false;
    };
  }, [place, kind, wanted]);
  return { listing, error };
}

export function PathPicker({ kind, accept, onPick, onClose }: Props) {
  const [place, setPlace] = useState<Place>({ root: '', path: '' });
  const { listing, error } = useListing(place, kind, accept);
  const root = listing?.root ?? place.root;
  return (
    <Backdrop onClose={onClose}>
      <div className="gb-dialog gb-picker" role="dialog" aria-label={`choose a ${kind}`}>
        <h2>Choose a {kind}</h2>
        <div className="gb-picker-bar">
          <select
            className="gb-input"
            aria-label="folder to browse"
            value={root}
            onChange={(e) => setPlace({ root: e.target.value, path: '' })}
          >
            {(listing?.roots ?? [root]).map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
          <span className="gb-mono gb-ellipsis" title={listing?.absolute}>
            /{listing?.path ?? ''}
          </span>
        </div>
        {error ? <div className="gb-banner gb-banner-error">{error}</div> : null}
        {listing ? <Entries listing={listing} onPlace={setPlace} onPick={onPick} /> : null}
        <div className="gb-dialog-choices">
          <button className="gb-button" onClick={onClose}>
            Cancel
          </button>
          {kind === 'folder' && listing ? (
            <button className="gb-button gb-primary" onClick={() => onPick(listing.absolute)}>
              Choose this folder
            </button>
          ) : null}
        </div>
      </div>
    </Backdrop>
  );
}

/** The folder's folders (a click opens one) and the files the picker takes (a click picks one). */
function Entries({
  listing,
  onPlace,
  onPick,
}: {
  listing: BrowseListing;
  onPlace(place: Place): void;
  onPick(path: string): void;
}) {
  const { root, path } = listing;
  const into = (name: string): string => (path ? `${path}/${name}` : name);
  return (
    <ul className="gb-picker-list">
      {path ? (
        <li>
          <button
            className="gb-picker-entry"
            onClick={() => onPlace({ root, path: path.split('/').slice(0, -1).join('/') })}
          >
            ↑ ..
          </button>
        </li>
      ) : null}
      {listing.entries.map((entry) => (
        <li key={entry.name}>
          <button
            className="gb-picker-entry"
            data-entry={entry.name}
            onClick={() =>
              entry.folder ? onPlace({ root, path: into(entry.name) }) : onPick(`${listing.absolute}/${entry.name}`)
            }
          >
            {entry.folder ? '📁' : '📄'} {entry.name}
          </button>
        </li>
      ))}
      {!listing.entries.length ? <li className="gb-muted">Nothing to choose here.</li> : null}
    </ul>
  );
}
