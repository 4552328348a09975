// The apps list (/apps): every workflow as an app, what it does, what it asks and shows.

import { useEffect, useState } from 'react';
import { fetchApps } from '../api/apps';
import type { AppList } from '../protocol';
import { appPath } from './route';
import { labelOf } from './values';

export function AppsPage() {
  const [list, setList] = useState<AppList | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    fetchApps()
      .then(setList)
      .catch((e: Error) => setError(e.message));
  }, []);
  return (
    <div className="gb-apppage">
      <header className="gb-apphead">
        <h1>Apps</h1>
        <span className="gb-spacer" />
        {list && !list.apps_only ? (
          <a className="gb-button gb-quiet" href="/">
            Open the editor
          </a>
        ) : null}
      </header>
      {error ? <div className="gb-banner gb-banner-error">{error}</div> : null}
      <ul className="gb-applist">
        {list?.apps.map((app) => (
          <li key={app.workflow}>
            <a className="gb-appcard" href={appPath(app.workflow)} data-app={app.workflow}>
              <strong>{app.title}</strong>
              <span className="gb-muted gb-mono">{app.workflow}</span>
              {app.doc ? <span className="gb-appcard-doc">{app.doc}</span> : null}
              <span className="gb-muted">
                {app.inputs.length ? `asks for ${app.inputs.map(labelOf).join(', ')}` : 'asks for nothing'}
                {app.outputs.length ? ` · shows ${app.outputs.map(labelOf).join(', ')}` : ''}
                {app.problems ? ` · ${app.problems} problem${app.problems === 1 ? '' : 's'}` : ''}
              </span>
            </a>
          </li>
        ))}
      </ul>
      {list && !list.apps.length ? <p className="gb-muted gb-applist">No workflows yet.</p> : null}
    </div>
  );
}
