// Past runs over the canvas: one run opened, or several compared (store/pastRuns.ts); Escape or
// the back button returns to the canvas.

import { useEffect } from 'react';
import { useNow } from '../hooks/useNow';
import { useOpenedRuns } from '../hooks/useOpenedRuns';
import { useRunHistory } from '../hooks/useRunHistory';
import { usePastRuns } from '../store/pastRuns';
import '../styles/runs.css';
import { RunCompare } from './RunCompare';
import { RunPage } from './RunPage';

export function RunsPage() {
  const open = usePastRuns((s) => s.open);
  const close = usePastRuns((s) => s.close);
  const { runs } = useRunHistory();
  const { details, metrics, error } = useOpenedRuns(open, runs ?? []);
  const now = useNow(15_000);
  useEffect(() => {
    const onKey = (event: KeyboardEvent): void => {
      if (event.key === 'Escape' && !document.querySelector('.gb-dialog')) close();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [close]);
  return (
    <section className="gb-runs-page gb-scroll" aria-label={open.length > 1 ? 'runs compared' : 'past run'}>
      <div className="gb-runs-page-bar">
        <button className="gb-button gb-runs-back" onClick={close} title="Back to the canvas (Esc)">
          ← Canvas
        </button>
      </div>
      {error ? <div className="gb-banner gb-banner-error">{error}</div> : null}
      {details === null ? (
        error ? null : (
          <p className="gb-empty gb-runs-loading">Loading…</p>
        )
      ) : details.length > 1 ? (
        <RunCompare runs={details} metrics={metrics} now={now} />
      ) : details[0] ? (
        <RunPage details={details[0]} metrics={metrics} history={runs ?? []} now={now} />
      ) : null}
    </section>
  );
}
