// The left-hand panel: the node palette and the workflows folder, one tab each.

import { useUi } from '../store/ui';
import { FilesPanel } from './FilesPanel';
import { Palette } from './Palette';

export function Sidebar() {
  const side = useUi((s) => s.side);
  const setSide = useUi((s) => s.setSide);
  return (
    <aside className="gb-sidebar">
      <nav className="gb-tabs" role="tablist">
        <button role="tab" aria-selected={side === 'nodes'} className={side === 'nodes' ? 'gb-active' : ''} onClick={() => setSide('nodes')}>Nodes</button>
        <button role="tab" aria-selected={side === 'files'} className={side === 'files' ? 'gb-active' : ''} onClick={() => setSide('files')}>Workflows</button>
      </nav>
      {side === 'nodes' ? <Palette /> : <FilesPanel />}
    </aside>
  );
}
