// An images result: each image with its fields beside it, a page at a time ("Show more"); a
// click opens the image whole.

import { useEffect, useState } from 'react';
import { fetchResultGallery } from '../api/apps';
import type { AppResult, GalleryRow } from '../protocol';

const PAGE = 24;

function useRows(job: string, output: string, shown: number) {
  const [rows, setRows] = useState<GalleryRow[]>([]);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState('');
  useEffect(() => {
    let live = true;
    fetchResultGallery(job, output, 0, shown)
      .then((page) => live && (setRows(page.rows), setTotal(page.matched), setError('')))
      .catch((e: Error) => live && setError(e.message));
    return () => {
      live = false;
    };
  }, [job, output, shown]);
  return { rows, total, error };
}

export function ResultGallery({ job, result }: { job: string; result: AppResult }) {
  const [shown, setShown] = useState(PAGE);
  const { rows, total, error } = useRows(job, result.name, shown);
  return (
    <div className="gb-result-gallery">
      {error ? <div className="gb-banner gb-banner-error">{error}</div> : null}
      <ul className="gb-tiles">
        {rows.map((row) => (
          <Tile key={row.index} row={row} />
        ))}
      </ul>
      {rows.length < total ? (
        <button className="gb-button" onClick={() => setShown(shown + PAGE)}>
          Show more ({total - rows.length} left)
        </button>
      ) : null}
    </div>
  );
}

function Tile({ row }: { row: GalleryRow }) {
  const fields = Object.entries(row.fields).filter(([, value]) => value !== null && value !== '');
  const picture = row.thumb ?? row.url;
  return (
    <li className="gb-tile" data-index={row.index}>
      {picture ? (
        <a href={row.url ?? picture} target="_blank" rel="noreferrer" title={row.path ?? ''}>
          <img src={picture} alt={row.path ?? `image ${row.index + 1}`} loading="lazy" />
        </a>
      ) : (
        <div className="gb-tile-none gb-muted">no image</div>
      )}
      <dl className="gb-tile-fields">
        {fields.map(([key, value]) => (
          <div key={key}>
            <dt>{key}</dt>
            <dd className="gb-ellipsis" title={String(value)}>
              {typeof value === 'number' && !Number.isInteger(value) ? value.toFixed(3) : String(value)}
            </dd>
          </div>
        ))}
      </dl>
    </li>
  );
}
