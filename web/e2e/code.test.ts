// The code editor of function parameters: Python highlighting in both themes, Tab indents, and
// keys, drags and wheel that stay inside it; typing is undone on the canvas one burst at a time.

import { join } from 'node:path';
import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { appSession, canvasReady, mod, node, nodeIds, openApp, painted, readJson, switchTheme, until } from './app';
import { SCREENSHOTS } from './browser';

const app = appSession();

const editor = (): Locator => node(app.page, 'split').locator('.cm-editor');
const code = (): Locator => node(app.page, 'split').getByLabel('split_fn', { exact: true });
/** The editor's text, one line per .cm-line (innerText would add blank lines in some cases). */
const text = (): Promise<string> =>
  editor()
    .locator('.cm-line')
    .evaluateAll((lines) => lines.map((l) => l.textContent ?? '').join('\n'));
const saved = (): unknown => readJson(app.server, 'hello.json').nodes.find((n) => n.id === 'split')?.params.split_fn;
const unsaved = (): Promise<boolean> =>
  app.page
    .locator('.gb-file-title')
    .getAttribute('data-dirty')
    .then((v) => v === 'true');
const pane = (): Promise<void> => app.page.locator('.react-flow__pane').click({ position: { x: 20, y: 20 } });
/** Undo (or redo) on the canvas until the editor's text is `wanted`: typing is one step per
 * burst, and a burst ends when typing pauses for half a second, which a loaded machine may make
 * it do (the last test's paste, too, is a step of its own or part of this test's typing). */
async function stepTo(button: 'undo' | 'redo', wanted: (text: string) => boolean, what: string): Promise<void> {
  for (let steps = 0; !wanted(await text()); steps++) {
    if (steps === 8) throw new Error(`${button} 8 times and the text is not ${what}: ${await text()}`);
    const shown = await text();
    await app.page.getByLabel(button).click();
    await until(text, (t) => t !== shown, `a step of ${button}`);
  }
}
const colourOf = (token: string): Promise<string> =>
  editor()
    .locator('.cm-line span', { hasText: token })
    .first()
    .evaluate((el) => getComputedStyle(el).color);

describe('the code editor', () => {
  it('highlights Python in the theme colours', async () => {
    await openApp(app.page, app.server, 'hello.json');
    await editor().waitFor();
    expect(await text()).toBe("lambda data: data['n'] % 2 == 0");
    const plain = await editor()
      .locator('.cm-content')
      .evaluate((el) => getComputedStyle(el).color);
    const keyword = await colourOf('lambda');
    const string = await colourOf("'n'");
    expect(new Set([plain, keyword, string]).size).toBe(3);
    await node(app.page, 'split').screenshot({ path: join(SCREENSHOTS, 'code-light.png') });
    await app.page.getByLabel('switch theme').click();
    await until(
      () => colourOf('lambda'),
      (c) => c !== keyword,
      'the dark keyword colour',
    );
    await node(app.page, 'split').screenshot({ path: join(SCREENSHOTS, 'code-dark.png') });
    await app.page.getByLabel('switch theme').click();
  });

  it('keeps Delete, Backspace, Ctrl+Z, Ctrl+A, Ctrl+C and Ctrl+V to the text', async () => {
    // The canvas clipboard holds a node, so a paste that reached the canvas would add one.
    await node(app.page, 'greetings').locator('.gb-node-header').click();
    await app.page.keyboard.press(`${mod}+c`);
    const ids = await nodeIds(app.page);

    // At the start of the text: a click beside a bracket redraws its line (bracket matching) under
    // the pointer, and the browser then sends no click to select the node.
    await code().click({ position: { x: 3, y: 5 } });
    await app.page.keyboard.press(`${mod}+End`);
    await app.page.keyboard.type(' and True');
    await app.page.keyboard.press('Backspace');
    await app.page.keyboard.press('Backspace');
    await app.page.keyboard.press('ArrowLeft');
    await app.page.keyboard.press('Delete');
    expect(await text()).toBe("lambda data: data['n'] % 2 == 0 and T");
    await app.page.keyboard.press(`${mod}+z`);
    expect(await text()).toBe("lambda data: data['n'] % 2 == 0 and Tr");
    for (let i = 0; i < 3 && (await text()) !== "lambda data: data['n'] % 2 == 0"; i++)
      await app.page.keyboard.press(`${mod}+z`);
    expect(await text()).toBe("lambda data: data['n'] % 2 == 0");
    expect(await nodeIds(app.page)).toEqual(ids);

    await app.page.keyboard.press(`${mod}+a`);
    await app.page.keyboard.press(`${mod}+c`);
    await app.page.keyboard.press(`${mod}+End`);
    await app.page.keyboard.press('Enter');
    await app.page.keyboard.press(`${mod}+v`);
    expect(await text()).toBe("lambda data: data['n'] % 2 == 0\nlambda data: data['n'] % 2 == 0");
    expect(await nodeIds(app.page)).toEqual(ids);
    // Ctrl+A selected the text, not every node: only the editor's own node is selected.
    expect(
      await app.page
        .locator('.react-flow__node-graph.selected')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-id'))),
    ).toEqual(['split']);
  });

  it('indents with Tab and after a colon, and its typing is undone back to the text before it', async () => {
    await code().click();
    await app.page.keyboard.press(`${mod}+a`);
    await app.page.keyboard.type('def split(data):');
    await app.page.keyboard.press('Enter');
    await app.page.keyboard.type("n = data['n']");
    await app.page.keyboard.press('Enter');
    await app.page.keyboard.press('Shift+Tab');
    await app.page.keyboard.press('Tab');
    await app.page.keyboard.type('return n % 2 == 0');
    expect(await text()).toBe("def split(data):\n    n = data['n']\n    return n % 2 == 0");
    await app.page.keyboard.press(`${mod}+s`);
    await until(unsaved, (dirty) => !dirty, 'the save');
    expect(saved()).toBe("def split(data):\n    n = data['n']\n    return n % 2 == 0");
    await node(app.page, 'split').screenshot({ path: join(SCREENSHOTS, 'code-function-light.png') });

    // What was typed is undone on the canvas (a click on it commits the typing not yet a step).
    const typed = "def split(data):\n    n = data['n']\n    return n % 2 == 0";
    await pane();
    await stepTo('undo', (t) => t.startsWith("lambda data: data['n'] % 2 == 0"), 'the text before the typing');
    await stepTo('redo', (t) => t === typed, 'the typed text');
    await until(unsaved, (dirty) => !dirty, 'nothing left unsaved', 8000);
  });

  it('does not move the node or the canvas when dragging or scrolling inside it', async () => {
    const before = await node(app.page, 'split').boundingBox();
    const viewport = () =>
      app.page.locator('.react-flow__viewport').evaluate((el) => (el as HTMLElement).style.transform);
    const transform = await viewport();
    const box = await editor().boundingBox();
    if (!before || !box) throw new Error('the editor is not shown');
    await app.page.mouse.move(box.x + 12, box.y + 8);
    await app.page.mouse.down();
    await app.page.mouse.move(box.x + box.width - 20, box.y + box.height - 8, { steps: 8 });
    await app.page.mouse.move(box.x + box.width + 80, box.y + box.height + 60, { steps: 8 });
    await app.page.mouse.up();
    expect(await node(app.page, 'split').boundingBox()).toEqual(before);
    expect(await app.page.evaluate(() => getSelection()?.toString().length ?? 0)).toBeGreaterThan(10);
    await app.page.mouse.move(box.x + 20, box.y + 10);
    await app.page.mouse.wheel(0, 200);
    await painted(app.page);
    expect(await viewport()).toBe(transform);
  });

  it('shows the saved text after a reload', async () => {
    await app.page.reload();
    await app.page.locator('.gb-file-title', { hasText: 'hello.json' }).waitFor();
    await canvasReady(app.page);
    await editor().waitFor();
    expect(await text()).toBe("def split(data):\n    n = data['n']\n    return n % 2 == 0");
    await switchTheme(app.page);
    await node(app.page, 'split').screenshot({ path: join(SCREENSHOTS, 'code-function-dark.png') });
    await app.page.getByLabel('switch theme').click();
  });
});
