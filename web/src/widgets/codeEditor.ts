// The CodeMirror editor behind CodeWidget: Python highlighting in the theme's colours
// (styles/code.css), 4-space Tab indents, its own undo. Loaded as a chunk of its own.

import { defaultKeymap, history, historyKeymap, indentLess, indentMore } from '@codemirror/commands';
import { pythonLanguage } from '@codemirror/lang-python';
import { HighlightStyle, bracketMatching, indentOnInput, indentUnit, syntaxHighlighting } from '@codemirror/language';
import {
  Annotation,
  EditorSelection,
  EditorState,
  type Extension,
  type StateCommand,
  Transaction,
} from '@codemirror/state';
import { EditorView, drawSelection, keymap, placeholder } from '@codemirror/view';
import { tags as t } from '@lezer/highlight';

/** Marks changes that come from the document (undo, another file), not from typing here. */
const fromOutside = Annotation.define<boolean>();

const colour = (name: string) => ({ color: `var(--gb-code-${name})` });
const highlight = HighlightStyle.define([
  { tag: [t.keyword, t.controlKeyword, t.definitionKeyword, t.moduleKeyword, t.operatorKeyword], ...colour('keyword') },
  { tag: [t.string, t.special(t.string)], ...colour('string') },
  { tag: [t.number, t.bool, t.null], ...colour('number') },
  { tag: t.comment, ...colour('comment'), fontStyle: 'italic' },
  {
    tag: [t.function(t.variableName), t.function(t.propertyName), t.definition(t.function(t.variableName))],
    ...colour('function'),
  },
  { tag: [t.className, t.definition(t.className), t.standard(t.variableName)], ...colour('builtin') },
  { tag: [t.self, t.special(t.variableName)], ...colour('self') },
  { tag: [t.operator, t.punctuation, t.bracket], ...colour('punctuation') },
]);

/** The editor's frame, like the other inputs (.gb-input); at most 12 lines, then it scrolls. */
const frame = EditorView.theme({
  '&': {
    border: '1px solid var(--gb-border)',
    borderRadius: '6px',
    background: 'var(--gb-input)',
    color: 'var(--gb-text)',
    fontSize: '11.5px',
  },
  '&.cm-focused': { outline: 'none', borderColor: 'var(--gb-accent)', boxShadow: '0 0 0 2px var(--gb-accent-soft)' },
  '.cm-scroller': { fontFamily: 'var(--gb-mono)', lineHeight: '1.4', maxHeight: '200px', overflow: 'auto' },
  '.cm-content': { padding: '3px 0', caretColor: 'var(--gb-text)' },
  '.cm-line': { padding: '0 6px' },
  '.cm-cursor, .cm-dropCursor': { borderLeftColor: 'var(--gb-text)' },
  '&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground': {
    background: 'var(--gb-code-selection)',
  },
  '&.cm-focused .cm-matchingBracket': { background: 'var(--gb-code-bracket)', color: 'inherit' },
  '&.cm-focused .cm-nonmatchingBracket': { color: 'var(--gb-danger)' },
  '.cm-placeholder': { color: 'var(--gb-muted)', opacity: '0.8' },
});

/** Tab: spaces to the next multiple of 4 at each cursor, or a selection's lines indented. */
const tab: StateCommand = ({ state, dispatch }) => {
  if (state.selection.ranges.some((r) => !r.empty)) return indentMore({ state, dispatch });
  const change = state.changeByRange((r) => {
    const spaces = ' '.repeat(4 - ((r.from - state.doc.lineAt(r.from).from) % 4));
    return { changes: { from: r.from, insert: spaces }, range: EditorSelection.cursor(r.from + spaces.length) };
  });
  dispatch(state.update(change, { scrollIntoView: true, userEvent: 'input' }));
  return true;
};

/** Ctrl+Enter runs the workflow (useShortcuts), so the editor leaves it alone. */
const keys = [
  { key: 'Tab', run: tab, shift: indentLess },
  ...defaultKeymap.filter((k) => k.key !== 'Mod-Enter'),
  ...historyKeymap,
];

function extensions(hint: string, label: string, emit: (text: string) => void): Extension[] {
  return [
    history(),
    drawSelection(),
    indentOnInput(),
    bracketMatching(),
    pythonLanguage,
    syntaxHighlighting(highlight),
    frame,
    indentUnit.of('    '),
    EditorState.tabSize.of(4),
    keymap.of(keys),
    placeholder(hint),
    EditorView.contentAttributes.of({ 'aria-label': label, spellcheck: 'false' }),
    EditorView.updateListener.of((update) => {
      if (update.docChanged && !update.transactions.some((tr) => tr.annotation(fromOutside)))
        emit(update.state.doc.toString());
    }),
  ];
}

export interface CodeEditor {
  /** Shows text changed elsewhere (undo on the canvas, a reload); no echo, no undo entry here. */
  setText(text: string): void;
  destroy(): void;
}

export function createCodeEditor(
  parent: HTMLElement,
  text: string,
  hint: string,
  label: string,
  onText: (text: string) => void,
): CodeEditor {
  const view = new EditorView({
    parent,
    state: EditorState.create({ doc: text, extensions: extensions(hint, label, onText) }),
  });
  return {
    setText(next) {
      if (view.state.doc.toString() === next) return;
      view.dispatch({
        changes: { from: 0, to: view.state.doc.length, insert: next },
        annotations: [fromOutside.of(true), Transaction.addToHistory.of(false)],
      });
    },
    destroy: () => view.destroy(),
  };
}
