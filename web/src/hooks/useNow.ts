// The time in unix seconds, renewed every `every` ms, for relative times that stay true.

import { useEffect, useState } from 'react';

export function useNow(every: number): number {
  const [now, setNow] = useState(() => Date.now() / 1000);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now() / 1000), every);
    return () => clearInterval(timer);
  }, [every]);
  return now;
}
