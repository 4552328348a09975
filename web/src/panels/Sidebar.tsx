// The left-hand panel: the node palette, the workflows folder and past runs, one tab each.

import { useUi } from '../store/ui';
import type { SideTab } from '../store/ui';
import { FilesPanel } from './FilesPanel';
import { HistoryPanel } from './HistoryPanel';
import { Palette } from './Palette';

const TABS: [tab: SideTab, name: string][] = [
  ['nodes', 'Nodes'],
  ['files', 'Workflows'],
  ['runs', 'Runs'],
];

export function Sidebar() {
  const side = useUi((s) => s.side);
  const setSide = useUi((s) => s.setSide);
  return (
    <aside className="gb-sidebar">
      <nav className="gb-tabs" role="tablist">
        {TABS.map(([tab, name]) => (
          <button key={tab} role="tab" aria-selected={side === tab} className={side === tab ? 'gb-active' : ''} onClick={() => setSide(tab)}>
            {name}
          </button>
        ))}
      </nav>
      {side === 'nodes' ? <Palette /> : side === 'files' ? <FilesPanel /> : <HistoryPanel />}
    </aside>
  );
}
