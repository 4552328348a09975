// The dimmed page behind a dialog: a press on it (not on the dialog) closes the dialog.

import type { ReactNode } from 'react';

export function Backdrop({
  className,
  onClose,
  children,
}: {
  className?: string;
  onClose(): void;
  children: ReactNode;
}) {
  return (
    <div
      className={className ? `gb-dialog-backdrop ${className}` : 'gb-dialog-backdrop'}
      onMouseDown={(e) => e.target === e.currentTarget && onClose()}
    >
      {children}
    </div>
  );
}
