// A prompt node's question, answered inside the node.

import { useState } from 'react';
import { answer } from '../actions/run';
import { imageSrc, imagesIn } from '../preview';
import type { Prompt } from '../protocol';
import type { Json } from '../workflow/format';
import { Widget } from '../widgets/Widget';

const field = (prompt: Record<string, unknown>, key: string): unknown => prompt[key];

function optionsOf(prompt: Record<string, unknown>): { choices: string[]; multiple: boolean } {
  const options = field(prompt, 'options');
  const data =
    typeof options === 'object' && options !== null
      ? (options as { choices?: unknown; multiple_allowed?: unknown })
      : {};
  return {
    choices: Array.isArray(data.choices) ? data.choices.map(String) : [],
    multiple: data.multiple_allowed === true,
  };
}

function Several({ choices, initial, send }: { choices: string[]; initial: Json; send(v: string[]): void }) {
  const [picked, setPicked] = useState<string[]>(Array.isArray(initial) ? initial.map(String) : []);
  const flip = (c: string): void => setPicked(picked.includes(c) ? picked.filter((p) => p !== c) : [...picked, c]);
  return (
    <div className="gb-prompt-actions gb-wrap">
      {choices.map((c) => (
        <label key={c} className="gb-check">
          <input type="checkbox" checked={picked.includes(c)} onChange={() => flip(c)} />
          <span>{c}</span>
        </label>
      ))}
      <button className="gb-button gb-primary" onClick={() => send(picked)}>
        Send
      </button>
    </div>
  );
}

function YesNo({ send }: { send(v: boolean): void }) {
  return (
    <div className="gb-prompt-actions">
      <button className="gb-button" onClick={() => send(true)}>
        Yes
      </button>
      <button className="gb-button" onClick={() => send(false)}>
        No
      </button>
    </div>
  );
}

function OneOf({ choices, send }: { choices: string[]; send(v: string): void }) {
  return (
    <div className="gb-prompt-actions gb-wrap">
      {choices.map((c) => (
        <button key={c} className="gb-button" onClick={() => send(c)}>
          {c}
        </button>
      ))}
    </div>
  );
}

function Typed({ type, fallback, send }: { type: string; fallback: Json; send(v: unknown): void }) {
  const [value, setValue] = useState<Json | undefined>(fallback ?? undefined);
  return (
    <div className="gb-prompt-actions">
      <Widget
        type={type === 'text' ? 'string' : type}
        label="answer"
        value={value}
        fallback={fallback}
        onChange={setValue}
      />
      <button className="gb-button gb-primary" onClick={() => send(value ?? fallback)}>
        Send
      </button>
    </div>
  );
}

/** The answer's controls, by the kind of question. */
function Answer({ question, send }: { question: Prompt['prompt']; send(v: unknown): void }) {
  const type = String(field(question, 'type') ?? 'string');
  const fallback = (field(question, 'def') ?? null) as Json;
  if (type === 'bool' || type === 'boolean') return <YesNo send={send} />;
  const options = optionsOf(question);
  if (type === 'selection' && options.multiple)
    return <Several choices={options.choices} initial={fallback} send={send} />;
  if (type === 'selection') return <OneOf choices={options.choices} send={send} />;
  return <Typed type={type} fallback={fallback} send={send} />;
}

export function PromptForm({ prompt }: { prompt: Prompt }) {
  const question = prompt.prompt;
  const send = (v: unknown): void => void answer(prompt.prompt_id, v);
  const images = field(question, 'show_images') ? imagesIn(prompt.data, 4) : [];
  return (
    <div className="gb-prompt nodrag" data-prompt={prompt.prompt_id}>
      <div className="gb-prompt-msg">{String(field(question, 'msg') ?? 'Answer?')}</div>
      {images.length ? (
        <div className="gb-media">
          {images.map((im, i) => (
            <img key={i} src={imageSrc(im)} alt="" />
          ))}
        </div>
      ) : null}
      <Answer question={question} send={send} />
    </div>
  );
}
