// The code editor of function parameters: Python highlighting in both themes, Tab indents, and
// keys, drags and wheel that stay inside it; one undo entry per burst of typing on the canvas.

import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { canvasReady, mod, node, nodeIds, openApp, readJson, until } from './app';
import { type Browser, SCREENSHOTS, openBrowser, screenshot } from './browser';
import { type Server, startServer } from './server';

let server: Server;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  server = await startServer();
  browser = await openBrowser();
  page = await browser.page();
});

afterEach(async (context) => {
  if (context.task.result?.state === 'fail') await screenshot(page, `failed-${context.task.name.replace(/\W+/g, '-')}`).catch(() => null);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const editor = (): Locator => node(page, 'split').locator('.cm-editor');
const code = (): Locator => node(page, 'split').getByLabel('split_fn', { exact: true });
/** The editor's text, one line per .cm-line (innerText would add blank lines in some cases). */
const text = (): Promise<string> => editor().locator('.cm-line').evaluateAll((lines) => lines.map((l) => l.textContent ?? '').join('\n'));
const saved = (): unknown => readJson(server, 'hello.json').nodes.find((n) => n.id === 'split')?.params.split_fn;
const unsaved = (): Promise<boolean> => page.locator('.gb-file-title').getAttribute('data-dirty').then((v) => v === 'true');
const colourOf = (token: string): Promise<string> =>
  editor().locator('.cm-line span', { hasText: token }).first().evaluate((el) => getComputedStyle(el).color);

describe('the code editor', () => {
  it('highlights Python in the theme colours', async () => {
    await openApp(page, server, 'hello.json');
    await editor().waitFor();
    expect(await text()).toBe("lambda data: data['n'] % 2 == 0");
    const plain = await editor().locator('.cm-content').evaluate((el) => getComputedStyle(el).color);
    const keyword = await colourOf('lambda');
    const string = await colourOf("'n'");
    expect(new Set([plain, keyword, string]).size).toBe(3);
    await node(page, 'split').screenshot({ path: join(SCREENSHOTS, 'code-light.png') });
    await page.getByLabel('switch theme').click();
    await until(() => colourOf('lambda'), (c) => c !== keyword, 'the dark keyword colour');
    await node(page, 'split').screenshot({ path: join(SCREENSHOTS, 'code-dark.png') });
    await page.getByLabel('switch theme').click();
  });

  it('keeps Delete, Backspace, Ctrl+Z, Ctrl+A, Ctrl+C and Ctrl+V to the text', async () => {
    // The canvas clipboard holds a node, so a paste that reached the canvas would add one.
    await node(page, 'greetings').locator('.gb-node-header').click();
    await page.keyboard.press(`${mod}+c`);
    const ids = await nodeIds(page);

    await code().click();
    await page.keyboard.press(`${mod}+End`);
    await page.keyboard.type(' and True');
    await page.keyboard.press('Backspace');
    await page.keyboard.press('Backspace');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('Delete');
    expect(await text()).toBe("lambda data: data['n'] % 2 == 0 and T");
    await page.keyboard.press(`${mod}+z`);
    expect(await text()).toBe("lambda data: data['n'] % 2 == 0 and Tr");
    for (let i = 0; i < 3 && (await text()) !== "lambda data: data['n'] % 2 == 0"; i++) await page.keyboard.press(`${mod}+z`);
    expect(await text()).toBe("lambda data: data['n'] % 2 == 0");
    expect(await nodeIds(page)).toEqual(ids);

    await page.keyboard.press(`${mod}+a`);
    await page.keyboard.press(`${mod}+c`);
    await page.keyboard.press(`${mod}+End`);
    await page.keyboard.press('Enter');
    await page.keyboard.press(`${mod}+v`);
    expect(await text()).toBe("lambda data: data['n'] % 2 == 0\nlambda data: data['n'] % 2 == 0");
    expect(await nodeIds(page)).toEqual(ids);
    // Ctrl+A selected the text, not every node: only the editor's own node is selected.
    expect(await page.locator('.react-flow__node-graph.selected').evaluateAll((els) => els.map((e) => e.getAttribute('data-id')))).toEqual(['split']);
  });

  it('indents with Tab and after a colon, and commits the text as one undo step', async () => {
    await code().click();
    await page.keyboard.press(`${mod}+a`);
    await page.keyboard.type('def split(data):');
    await page.keyboard.press('Enter');
    await page.keyboard.type("n = data['n']");
    await page.keyboard.press('Enter');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.type('return n % 2 == 0');
    expect(await text()).toBe("def split(data):\n    n = data['n']\n    return n % 2 == 0");
    await page.keyboard.press(`${mod}+s`);
    await until(unsaved, (dirty) => !dirty, 'the save');
    expect(saved()).toBe("def split(data):\n    n = data['n']\n    return n % 2 == 0");
    await node(page, 'split').screenshot({ path: join(SCREENSHOTS, 'code-function-light.png') });

    // Everything typed since the last canvas edit is one step of the canvas's undo.
    await page.waitForTimeout(700);
    await page.locator('.react-flow__pane').click({ position: { x: 20, y: 20 } });
    await page.getByLabel('undo').click();
    await until(text, (t) => t === "lambda data: data['n'] % 2 == 0", 'the text before the typing');
    await page.getByLabel('redo').click();
    await until(text, (t) => t.startsWith('def split'), 'the typed text again');
    await until(unsaved, (dirty) => !dirty, 'nothing left unsaved', 8000);
  });

  it('does not move the node or the canvas when dragging or scrolling inside it', async () => {
    const before = await node(page, 'split').boundingBox();
    const viewport = () => page.locator('.react-flow__viewport').evaluate((el) => (el as HTMLElement).style.transform);
    const transform = await viewport();
    const box = await editor().boundingBox();
    if (!before || !box) throw new Error('the editor is not shown');
    await page.mouse.move(box.x + 12, box.y + 8);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width - 20, box.y + box.height - 8, { steps: 8 });
    await page.mouse.move(box.x + box.width + 80, box.y + box.height + 60, { steps: 8 });
    await page.mouse.up();
    expect(await node(page, 'split').boundingBox()).toEqual(before);
    expect(await page.evaluate(() => getSelection()?.toString().length ?? 0)).toBeGreaterThan(10);
    await page.mouse.move(box.x + 20, box.y + 10);
    await page.mouse.wheel(0, 200);
    await page.waitForTimeout(200);
    expect(await viewport()).toBe(transform);
  });

  it('shows the saved text after a reload', async () => {
    await page.reload();
    await page.locator('.gb-file-title', { hasText: 'hello.json' }).waitFor();
    await canvasReady(page);
    await editor().waitFor();
    expect(await text()).toBe("def split(data):\n    n = data['n']\n    return n % 2 == 0");
    await page.getByLabel('switch theme').click();
    await page.waitForTimeout(200);
    await node(page, 'split').screenshot({ path: join(SCREENSHOTS, 'code-function-dark.png') });
    await page.getByLabel('switch theme').click();
  });
});
