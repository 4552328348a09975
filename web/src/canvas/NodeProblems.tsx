// Validation problems painted on the node: what is wrong and how to fix it.

import type { Problem } from '../workflow/validate';

export function NodeProblems({ problems }: { problems: Problem[] }) {
  if (!problems.length) return null;
  return (
    <ul className="gb-problems">
      {problems.map((p, i) => (
        <li key={i} title={p.fix}>
          <span>{p.message}</span>
          {p.fix ? <small>{p.fix}</small> : null}
        </li>
      ))}
    </ul>
  );
}
