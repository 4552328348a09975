// The keys, over the page (`?` opens and closes it, Esc or a click outside closes it).

import { SHORTCUTS } from '../hooks/useShortcuts';
import { useUi } from '../store/ui';
import { Backdrop } from '../widgets/Backdrop';

export function ShortcutsOverlay() {
  const open = useUi((s) => s.shortcuts);
  const show = useUi((s) => s.showShortcuts);
  if (!open) return null;
  return (
    <Backdrop onClose={() => show(false)}>
      <div className="gb-dialog gb-shortcuts" role="dialog" aria-label="keyboard shortcuts">
        <h2>Keys</h2>
        <table>
          <tbody>
            {SHORTCUTS.map(([keys, action]) => (
              <tr key={keys}>
                <td>
                  <kbd>{keys}</kbd>
                </td>
                <td>{action}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <p className="gb-muted">Ctrl is Cmd on a Mac. Press ? or Esc to close.</p>
      </div>
    </Backdrop>
  );
}
