// Which page the address names: the editor, the apps list (/apps), or an app (/app/WORKFLOW,
// `?job=ID` opening one of its runs: the link a run shares).

export type Page = { kind: 'editor' } | { kind: 'apps' } | { kind: 'app'; workflow: string; job: string | null };

export function pageOf(location: Pick<Location, 'pathname' | 'search'>): Page {
  const path = location.pathname;
  const app = /(?:^|\/)app\/(.+)$/.exec(path);
  if (app?.[1]) {
    const workflow = app[1].split('/').map(decodeURIComponent).join('/');
    return { kind: 'app', workflow, job: new URLSearchParams(location.search).get('job') };
  }
  return /(?:^|\/)apps\/?$/.test(path) ? { kind: 'apps' } : { kind: 'editor' };
}

/** The path of an app's page (of one of its runs, with `job`). */
export function appPath(workflow: string, job?: string | null): string {
  const path = `/app/${workflow.split('/').map(encodeURIComponent).join('/')}`;
  return job ? `${path}?job=${encodeURIComponent(job)}` : path;
}
