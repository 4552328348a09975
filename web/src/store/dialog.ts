// A question the app asks before doing something that cannot be undone (unsaved changes):
// one at a time, answered by one of its choices, or by Escape (the last choice, "cancel").

import { create } from 'zustand';

export interface Choice {
  value: string;
  label: string;
  primary?: boolean;
}

export interface Question {
  title: string;
  text: string;
  /** The last one is what Escape or a click outside answers. */
  choices: Choice[];
}

interface DialogState {
  question: Question | null;
  answer: ((value: string) => void) | null;
  ask(question: Question): Promise<string>;
  reply(value: string): void;
}

export const useDialog = create<DialogState>()((set, get) => ({
  question: null,
  answer: null,
  ask(question) {
    get().answer?.(question.choices.at(-1)?.value ?? '');
    return new Promise((resolve) => set({ question, answer: resolve }));
  },
  reply(value) {
    const answer = get().answer;
    set({ question: null, answer: null });
    answer?.(value);
  },
}));
