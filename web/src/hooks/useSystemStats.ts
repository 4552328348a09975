// The server's system stats, polled every `every` ms while the caller is mounted and the page
// is visible; the last answer stays until the next.

import { useEffect, useState } from 'react';
import { fetchSystem } from '../api/runs';
import type { SystemStats } from '../protocol';

export function useSystemStats(every = 2000): SystemStats | null {
  const [stats, setStats] = useState<SystemStats | null>(null);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let mounted = true;
    const poll = async (): Promise<void> => {
      if (document.visibilityState === 'visible') {
        const next = await fetchSystem().catch(() => null);
        if (mounted && next) setStats(next);
      }
      if (mounted) timer = setTimeout(() => void poll(), every);
    };
    void poll();
    return () => {
      mounted = false;
      clearTimeout(timer);
    };
  }, [every]);
  return stats;
}
