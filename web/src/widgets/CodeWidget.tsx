// Python source for function parameters in a code editor (codeEditor.ts, CodeMirror), loaded
// apart from the app; until it arrives the text shows as it will look. Its keys, drags and wheel
// stay inside it: `nodrag nowheel nokey` for React Flow, and useShortcuts leaves editable text be.

import { useEffect, useRef, useState } from 'react';
import type { CodeEditor } from './codeEditor';
import type { WidgetProps } from './types';
import '../styles/code.css';

const loading = import('./codeEditor');

export function CodeWidget({ value, fallback, onChange, label }: WidgetProps) {
  const text = typeof value === 'string' ? value : '';
  const hint = typeof fallback === 'string' ? fallback : 'lambda data: ...';
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<CodeEditor | null>(null);
  const latest = useRef({ text, onChange });
  latest.current = { text, onChange };
  const [ready, setReady] = useState(false);

  useEffect(() => {
    let mounted = true;
    const emit = (next: string): void => latest.current.onChange(next === '' ? undefined : next);
    void loading.then(({ createCodeEditor }) => {
      if (!mounted || !host.current) return;
      editor.current = createCodeEditor(host.current, latest.current.text, hint, label, emit);
      setReady(true);
    });
    return () => {
      mounted = false;
      editor.current?.destroy();
      editor.current = null;
    };
  }, [hint, label]);

  useEffect(() => editor.current?.setText(text), [text]);

  return (
    <div className="nodrag nowheel nokey gb-code-editor" data-code-param={label}>
      {ready ? null : <pre className={`gb-code-static${text ? '' : ' gb-code-hint'}`}>{text || hint}</pre>}
      <div ref={host} />
    </div>
  );
}
