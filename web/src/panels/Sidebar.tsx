// The left-hand panel: the node palette, the workflows folder, past runs and the job queue, one tab each.

import { useJobs } from '../store/jobs';
import { useUi } from '../store/ui';
import type { SideTab } from '../store/ui';
import { TabBar } from '../widgets/TabBar';
import { FilesPanel } from './FilesPanel';
import { HistoryPanel } from './HistoryPanel';
import { Palette } from './Palette';
import { QueuePanel } from './QueuePanel';

const TABS: [tab: SideTab, name: string][] = [
  ['nodes', 'Nodes'],
  ['files', 'Workflows'],
  ['runs', 'Runs'],
  ['queue', 'Queue'],
];

/** Jobs waiting, on the Queue tab, so a queue is seen from any tab. */
function Waiting() {
  const count = useJobs((s) => s.queued.length);
  return count ? (
    <span className="gb-tab-count" aria-label={`${count} waiting`}>
      {count}
    </span>
  ) : null;
}

export function Sidebar() {
  const side = useUi((s) => s.side);
  const setSide = useUi((s) => s.setSide);
  return (
    <aside className="gb-sidebar">
      <TabBar tabs={TABS} current={side} onPick={setSide} after={(tab) => (tab === 'queue' ? <Waiting /> : null)} />
      {side === 'nodes' ? (
        <Palette />
      ) : side === 'files' ? (
        <FilesPanel />
      ) : side === 'queue' ? (
        <QueuePanel />
      ) : (
        <HistoryPanel />
      )}
    </aside>
  );
}
