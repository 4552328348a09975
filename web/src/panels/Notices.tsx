// Short notices at the bottom of the screen; errors stay longer.

import { useUi } from '../store/ui';

export function Notices() {
  const notices = useUi((s) => s.notices);
  const dismiss = useUi((s) => s.dismiss);
  return (
    <div className="gb-notices" role="status" aria-live="polite">
      {notices.map((n) => (
        <div
          key={n.id}
          className={`gb-notice gb-notice-${n.kind}`}
          onClick={() => dismiss(n.id)}
          title="click to dismiss"
        >
          {n.text}
          <span className="gb-notice-close" aria-hidden="true">
            ×
          </span>
        </div>
      ))}
    </div>
  );
}
