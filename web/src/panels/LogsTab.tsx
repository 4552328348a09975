// What the node logged, newest last; the last lines are kept, and how many earlier ones are not.

import { type RefObject, useEffect, useRef } from 'react';
import type { NodeRun } from '../store/runState';
import { JsonTree } from './JsonTree';

/** Follows the newest line, unless the person scrolled up to read. */
function useFollow(count: number, shown: boolean): RefObject<HTMLOListElement | null> {
  const list = useRef<HTMLOListElement>(null);
  const following = useRef(true);
  useEffect(() => {
    const scroller = list.current?.closest('.gb-scroll');
    if (!scroller) return;
    const onScroll = (): void => {
      following.current = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 24;
    };
    scroller.addEventListener('scroll', onScroll);
    return () => scroller.removeEventListener('scroll', onScroll);
  }, [shown]);
  useEffect(() => {
    const scroller = list.current?.closest('.gb-scroll');
    if (scroller && following.current) scroller.scrollTop = scroller.scrollHeight;
  }, [count]);
  return list;
}

export function LogsTab({ run }: { run: NodeRun | undefined }) {
  const list = useFollow((run?.logs.length ?? 0) + (run?.logs_dropped ?? 0), !!run?.logs.length);
  if (!run?.logs.length) return <p className="gb-empty">No logs.</p>;
  return (
    <ol className="gb-logs" ref={list}>
      {run.logs_dropped ? (
        <li className="gb-log gb-log-dropped">
          {run.logs_dropped.toLocaleString('en')} line{run.logs_dropped === 1 ? '' : 's'} not shown (over 200 a second,
          or older than these): the last are kept
        </li>
      ) : null}
      {run.logs.map((entry, i) => (
        <li key={i} className={`gb-log gb-log-${entry.level}`}>
          <span className="gb-log-level">{entry.level}</span>
          {typeof entry.message === 'string' ? (
            <span className="gb-log-text">{entry.message}</span>
          ) : (
            <JsonTree value={entry.message} />
          )}
        </li>
      ))}
    </ol>
  );
}
