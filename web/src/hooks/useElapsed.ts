// A run's clock (`clock(now)`, now in unix seconds), ticking while `live`.

import { useEffect, useState } from 'react';

export function useElapsed(clock: (now: number) => number, live: boolean): number {
  const [now, setNow] = useState(() => Date.now() / 1000);
  useEffect(() => {
    if (!live) return;
    setNow(Date.now() / 1000);
    const timer = setInterval(() => setNow(Date.now() / 1000), 500);
    return () => clearInterval(timer);
  }, [live]);
  return clock(live ? now : Date.now() / 1000);
}
