// Seconds since `started` (unix time), ticking while `live`.

import { useEffect, useState } from 'react';

export function useElapsed(started: number, live: boolean, fixed: number): number {
  const [now, setNow] = useState(() => Date.now() / 1000);
  useEffect(() => {
    if (!live) return;
    setNow(Date.now() / 1000);
    const timer = setInterval(() => setNow(Date.now() / 1000), 500);
    return () => clearInterval(timer);
  }, [live]);
  return live ? Math.max(0, now - started) : fixed;
}
