// A table result: a page of rows at a time, sorted by the column clicked (again: the other way),
// and downloaded whole as CSV or Parquet.

import { useEffect, useState } from 'react';
import { type TableQuery, fetchTablePage } from '../api/apps';
import type { AppResult, AppTablePage } from '../protocol';

const PAGE = 25;

function useTablePage(job: string, output: string, query: TableQuery) {
  const [page, setPage] = useState<AppTablePage | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    let live = true;
    fetchTablePage(job, output, query)
      .then((found) => live && (setPage(found), setError('')))
      .catch((e: Error) => live && setError(e.message));
    return () => {
      live = false;
    };
  }, [job, output, query]);
  return { page, error };
}

export function ResultTable({ job, result }: { job: string; result: AppResult }) {
  const [query, setQuery] = useState<TableQuery>({ sort: '', order: 'asc', offset: 0, limit: PAGE });
  const { page, error } = useTablePage(job, result.name, query);
  const sortBy = (column: string): void =>
    setQuery({
      ...query,
      sort: column,
      offset: 0,
      order: query.sort === column && query.order === 'asc' ? 'desc' : 'asc',
    });
  return (
    <div className="gb-result-table">
      <div className="gb-result-tools">
        {result.downloads.map((file) => (
          <a key={file.name} className="gb-button" href={file.url} download={file.name} data-download={file.name}>
            ⤓ {file.name.split('.').pop()?.toUpperCase()}
          </a>
        ))}
        <span className="gb-spacer" />
        {page ? <Pager page={page} onOffset={(offset) => setQuery({ ...query, offset })} /> : null}
      </div>
      {error ? <div className="gb-banner gb-banner-error">{error}</div> : null}
      {page ? <Rows page={page} query={query} onSort={sortBy} /> : null}
    </div>
  );
}

function Rows({ page, query, onSort }: { page: AppTablePage; query: TableQuery; onSort(column: string): void }) {
  return (
    <div className="gb-result-scroll">
      <table>
        <thead>
          <tr>
            {page.columns.map((column) => (
              <th
                key={column}
                aria-sort={query.sort !== column ? 'none' : query.order === 'asc' ? 'ascending' : 'descending'}
              >
                <button onClick={() => onSort(column)}>
                  {column}
                  {query.sort === column ? (query.order === 'asc' ? ' ▲' : ' ▼') : ''}
                </button>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {page.rows.map((row, i) => (
            <tr key={page.offset + i}>
              {row.map((cell, j) => (
                <td key={j} title={typeof cell === 'string' ? cell : undefined}>
                  {cellText(cell)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function cellText(cell: unknown): string {
  if (cell === null || cell === undefined) return '';
  if (typeof cell === 'number') return Number.isInteger(cell) ? String(cell) : String(Number(cell.toPrecision(6)));
  return typeof cell === 'string' ? cell : JSON.stringify(cell);
}

function Pager({ page, onOffset }: { page: AppTablePage; onOffset(offset: number): void }) {
  const last = Math.min(page.total, page.offset + PAGE);
  return (
    <span className="gb-pager">
      <button
        className="gb-icon"
        aria-label="previous rows"
        disabled={page.offset === 0}
        onClick={() => onOffset(Math.max(0, page.offset - PAGE))}
      >
        ‹
      </button>
      <span className="gb-muted">
        {page.total ? page.offset + 1 : 0}–{last} of {page.total}
      </span>
      <button
        className="gb-icon"
        aria-label="next rows"
        disabled={last >= page.total}
        onClick={() => onOffset(page.offset + PAGE)}
      >
        ›
      </button>
    </span>
  );
}
