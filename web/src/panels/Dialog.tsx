// The app's own question box (store/dialog.ts): a title, a sentence and its choices as buttons.

import { useEffect, useRef } from 'react';
import { useDialog } from '../store/dialog';
import { Backdrop } from '../widgets/Backdrop';

export function Dialog() {
  const question = useDialog((s) => s.question);
  const reply = useDialog((s) => s.reply);
  const first = useRef<HTMLButtonElement>(null);
  useEffect(() => first.current?.focus(), [question]);
  if (!question) return null;
  const cancel = question.choices.at(-1)?.value ?? '';
  return (
    <Backdrop onClose={() => reply(cancel)}>
      <div
        className="gb-dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby="gb-dialog-title"
        onKeyDown={(e) => {
          e.stopPropagation();
          if (e.key === 'Escape') reply(cancel);
        }}
      >
        <h2 id="gb-dialog-title">{question.title}</h2>
        <p>{question.text}</p>
        <div className="gb-dialog-choices">
          {question.choices.map((c, i) => (
            <button
              key={c.value}
              ref={i === 0 ? first : undefined}
              className={`gb-button${c.primary ? ' gb-primary' : ''}`}
              onClick={() => reply(c.value)}
            >
              {c.label}
            </button>
          ))}
        </div>
      </div>
    </Backdrop>
  );
}
