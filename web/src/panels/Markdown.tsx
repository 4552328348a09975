// Docstrings as light Markdown: paragraphs, `code`, **bold**, and indented or fenced code blocks.

import type { ReactNode } from 'react';

function inline(text: string): ReactNode[] {
  return text.split(/(`[^`]+`|\*\*[^*]+\*\*)/g).map((part, i) => {
    if (part.startsWith('`') && part.endsWith('`') && part.length > 1) return <code key={i}>{part.slice(1, -1)}</code>;
    if (part.startsWith('**') && part.endsWith('**') && part.length > 3)
      return <strong key={i}>{part.slice(2, -2)}</strong>;
    return part;
  });
}

export function Markdown({ text }: { text: string }) {
  const blocks = text.replace(/```\w*\n?([\s\S]*?)```/g, (_, code: string) => `\u0000${code}`).split(/\n\s*\n/);
  return (
    <div className="gb-markdown">
      {blocks.map((block, i) =>
        block.startsWith('\u0000') || /^( {4}|\t)/.test(block) ? (
          <pre key={i}>{block.replace('\u0000', '')}</pre>
        ) : (
          <p key={i}>{inline(block.replace(/\s*\n\s*/g, ' '))}</p>
        ),
      )}
    </div>
  );
}
