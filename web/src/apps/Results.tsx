// What an ended run made, an output at a time: images in a gallery with their fields, tables
// (paged, sorted, downloaded), the files written, text.

import type { AppFile, AppResult, AppRun } from '../protocol';
import { sizeText } from './PathField';
import { ResultGallery } from './ResultGallery';
import { ResultTable } from './ResultTable';
import { labelOf } from './values';

export function Results({ run }: { run: AppRun }) {
  if (!run.results.length) return <p className="gb-muted">This run kept no results.</p>;
  return (
    <div className="gb-results">
      {run.results.map((result) => (
        <section key={result.name} className="gb-result" data-result={result.name} data-kind={result.kind}>
          <h3>
            {labelOf(result.name)} <span className="gb-muted">· {countWords(result)}</span>
          </h3>
          {result.description ? <p className="gb-muted gb-result-about">{result.description}</p> : null}
          {result.note ? <p className="gb-muted gb-result-about">{result.note}</p> : null}
          <ResultBody job={run.job.id} result={result} />
        </section>
      ))}
    </div>
  );
}

function countWords(result: AppResult): string {
  const noun = result.kind === 'images' ? 'image' : result.kind === 'table' ? 'row' : 'item';
  return `${result.count} ${noun}${result.count === 1 ? '' : 's'}`;
}

function ResultBody({ job, result }: { job: string; result: AppResult }) {
  if (result.kind === 'images') return <ResultGallery job={job} result={result} />;
  if (result.kind === 'table') return <ResultTable job={job} result={result} />;
  if (result.kind === 'text')
    return (
      <div className="gb-result-texts">
        {result.text.map((text, i) => (
          <pre key={i}>{text}</pre>
        ))}
      </div>
    );
  return <FileList files={result.files} />;
}

export function FileList({ files }: { files: AppFile[] }) {
  if (!files.length) return <p className="gb-muted">No files.</p>;
  return (
    <ul className="gb-result-files">
      {files.map((file) => (
        <li key={file.name}>
          {file.url ? (
            <a href={file.url} download>
              {file.name}
            </a>
          ) : (
            <span>{file.name}</span>
          )}{' '}
          <span className="gb-muted">{file.size >= 0 ? sizeText(file.size) : 'not written'}</span>
        </li>
      ))}
    </ul>
  );
}
