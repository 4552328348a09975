// Bypassing and muting a node (Ctrl+B, Ctrl+M, its menu), reroute points on a wire, and a
// source re-triggered from its node: what the person sees, what is saved, what runs.

import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { appSession, at, mod, node, openApp, readJson, runStatus, until, workflow } from './app';
import { screenshot } from './browser';

const LONG = 'Greetings read from the archive of last year';

const app = appSession({
  workflows: {
    'modes.json': workflow(
      [
        { id: 'greetings', type: 'Greetings', params: { count: 3 }, position: at(0, 0) },
        { id: 'shout', type: 'Shout', params: { loud: true }, position: at(320, 0) },
        { id: 'end', type: 'Shout', params: {}, position: at(640, 0) },
      ],
      [
        { source: 'greetings', output: 'out', target: 'shout', input: 'in' },
        { source: 'shout', output: 'out', target: 'end', input: 'in' },
      ],
    ),
    'reroute.json': workflow(
      [
        { id: 'a', type: 'Greetings', params: {}, position: at(0, 0) },
        { id: 'b', type: 'Shout', params: {}, position: at(320, 0) },
        { id: 'c', type: 'Shout', params: {}, position: at(640, 0) },
      ],
      [
        { source: 'a', output: 'out', target: 'b', input: 'in', points: [at(270, 220)] },
        { source: 'b', output: 'out', target: 'c', input: 'in', points: [at(590, 220)] },
      ],
    ),
    'titles.json': workflow(
      [
        { id: 'long_source', type: 'Greetings', label: LONG, params: {}, position: at(0, 0) },
        { id: 'short_source', type: 'Greetings', label: 'Hi', params: {}, position: at(0, 240) },
        { id: 'long_step', type: 'Shout', label: LONG, params: {}, position: at(320, 0) },
      ],
      [],
    ),
  },
});

const count = (p: Page, id: string): Promise<number> =>
  node(p, id)
    .locator('.gb-count[data-output="out"]')
    .innerText({ timeout: 1000 })
    .then(Number)
    .catch(() => 0);
const statusWord = (p: Page, id: string): Promise<string> => node(p, id).locator('.gb-status-word').innerText();

interface RunRecord {
  run_id: string;
  status: string;
  mode: string;
  node: string | null;
}

/** The server's run history, newest first. */
async function history(): Promise<RunRecord[]> {
  const response = await fetch(`${app.server.url}api/runs`);
  return ((await response.json()) as { runs: RunRecord[] }).runs;
}

/** Does `start` and waits for the run it starts to complete, on the server and on the page. */
async function runAndWait(page: Page, start: () => Promise<void>): Promise<RunRecord> {
  const before = (await history()).length;
  await start();
  const [latest] = await until(
    history,
    (runs) => runs.length > before && runs[0]?.status !== 'running',
    'the run to end',
    30_000,
  );
  expect(latest?.status).toBe('completed');
  // This run, not the one before it (also completed) that the page may show a moment longer.
  const shown = (): Promise<string> =>
    page.evaluate(() => document.querySelector('[data-run-status]')?.getAttribute('data-run-id') ?? '');
  await until(shown, (id) => id === latest?.run_id, 'the page to show this run');
  await until(
    () => runStatus(page),
    (s) => s === 'completed',
    'the page to show it ended',
  );
  return latest as RunRecord;
}

const runAll = (page: Page): Promise<RunRecord> =>
  runAndWait(page, () => page.getByRole('button', { name: 'run', exact: true }).click());

async function save(page: Page): Promise<void> {
  await page.keyboard.press(`${mod}+s`);
  await until(
    () => page.locator('.gb-file-title').getAttribute('data-dirty'),
    (d) => d === 'false',
    'the save',
  );
}

const modeOf = (id: string): unknown =>
  readJson(app.server, 'modes.json').nodes.find((n) => n.id === id)?.['mode' as keyof object];

describe('bypass and mute', () => {
  it('bypasses a node from its menu: purple, saved, and its input passes through when run', async () => {
    await openApp(app.page, app.server, 'modes.json');
    await node(app.page, 'shout').locator('.gb-node-header').click({ button: 'right' });
    await app.page.getByRole('menuitem', { name: 'Bypass' }).click();
    const shout = node(app.page, 'shout').locator('.gb-node');
    await until(
      () => shout.getAttribute('class'),
      (c) => !!c?.includes('gb-mode-bypass'),
      'the bypassed look',
    );
    expect(await node(app.page, 'shout').locator('.gb-mode-badge').innerText()).toMatch(/bypassed/i);
    const look = await shout.evaluate((el) => ({
      opacity: getComputedStyle(el).opacity,
      border: getComputedStyle(el).borderColor,
    }));
    expect(Number(look.opacity)).toBeLessThan(1);
    expect(look.border).toBe('rgb(163, 63, 209)');
    await save(app.page);
    expect(modeOf('shout')).toBe('bypass');
    await runAll(app.page);
    await until(
      () => count(app.page, 'end'),
      (n) => n === 3,
      'the dicts through the bypass',
    );
    expect(await count(app.page, 'shout')).toBe(0);
    expect(await statusWord(app.page, 'shout')).toBe('bypassed: its input passes through');
    await node(app.page, 'end').locator('.gb-node-header').click();
    await app.page.getByRole('tab', { name: /Logs/ }).click();
    await app.page.locator('.gb-log-text', { hasText: 'Hello, World! #2' }).waitFor();
    expect(await app.page.locator('.gb-log-text', { hasText: /HELLO, WORLD/ }).count(), 'shout did not run').toBe(0);
    await screenshot(app.page, 'modes-bypassed');
  });

  it('mutes with Ctrl+M (nothing flows on), and Ctrl+M again runs the node', async () => {
    await node(app.page, 'shout').locator('.gb-title').click();
    await app.page.keyboard.press(`${mod}+m`);
    const shout = node(app.page, 'shout').locator('.gb-node');
    await until(
      () => shout.getAttribute('class'),
      (c) => !!c?.includes('gb-mode-mute'),
      'the muted look',
    );
    expect(await shout.evaluate((el) => getComputedStyle(el).filter)).toBe('grayscale(1)');
    await runAll(app.page);
    await until(
      () => statusWord(app.page, 'end'),
      (w) => w === 'done',
      'end to finish',
    );
    expect(await count(app.page, 'greetings')).toBe(3);
    expect(await count(app.page, 'end')).toBe(0);
    await screenshot(app.page, 'modes-muted');
    await node(app.page, 'shout').locator('.gb-title').click();
    await app.page.keyboard.press(`${mod}+m`);
    await until(
      () => shout.getAttribute('class'),
      (c) => !c?.includes('gb-mode-'),
      'the node to run again',
    );
    await save(app.page);
    expect(modeOf('shout')).toBeUndefined();
    await runAll(app.page);
    await until(
      () => count(app.page, 'shout'),
      (n) => n === 3,
      'shout to run again',
    );
    expect(await count(app.page, 'end')).toBe(3);
  });

  it('lists the keys in the shortcut list', async () => {
    if (await app.page.getByLabel('close inspector').count()) await app.page.getByLabel('close inspector').click();
    const text = await app.page.locator('.gb-shortcut-list').innerText();
    expect(text).toContain('Ctrl+B / Ctrl+M');
    expect(text).toContain('Double-click a wire');
  });
});

describe('reroute points', () => {
  it('adds a point where a wire is double-clicked, drags it, saves it, and the run is the same', async () => {
    const path = app.page.locator('.react-flow__edge[data-id="greetings:out->shout:in"] .react-flow__edge-path');
    const box = await path.boundingBox();
    if (!box) throw new Error('wire not shown');
    const middle = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
    await app.page.mouse.dblclick(middle.x, middle.y);
    const dot = app.page.locator('.gb-reroute');
    await dot.waitFor();
    const start = await dot.boundingBox();
    if (!start) throw new Error('dot not shown');
    await app.page.mouse.move(start.x + start.width / 2, start.y + start.height / 2);
    await app.page.mouse.down();
    await app.page.mouse.move(start.x + 6, start.y + 160, { steps: 8 });
    await app.page.mouse.up();
    const moved = await dot.boundingBox();
    expect(moved && moved.y - start.y).toBeGreaterThan(120);
    const bent = await path.boundingBox();
    expect(bent && bent.y + bent.height).toBeGreaterThan(moved ? moved.y : 0);
    expect(await node(app.page, 'greetings').count()).toBe(1);
    await screenshot(app.page, 'modes-reroute');
    await save(app.page);
    const edges = readJson(app.server, 'modes.json').edges as { source: string; points?: { x: number; y: number }[] }[];
    const points = edges.find((e) => e.source === 'greetings')?.points ?? [];
    expect(points).toHaveLength(1);
    expect(points[0]?.y).toBeGreaterThan(100);
    await app.page.reload();
    await dot.waitFor();
    await runAll(app.page);
    await until(
      () => count(app.page, 'end'),
      (n) => n === 3,
      'the run through the bent wire',
    );

    await dot.dblclick();
    await dot.waitFor({ state: 'detached' });
    await save(app.page);
    expect((readJson(app.server, 'modes.json').edges as { points?: unknown }[]).every((e) => !e.points)).toBe(true);
  });
});

describe('re-triggering a source', () => {
  it('runs the source again from its button, not from the cache, with what it feeds; in the Runs tab', async () => {
    await runAll(app.page);
    expect(await statusWord(app.page, 'greetings')).toMatch(/cached/);
    const trigger = app.page.getByRole('button', { name: 'run greetings again' });
    expect(await app.page.getByRole('button', { name: 'run shout again' }).count(), 'only sources have it').toBe(0);
    const run = await runAndWait(app.page, () => trigger.click());
    expect([run.mode, run.node]).toEqual(['trigger', 'greetings']);
    for (const id of ['greetings', 'shout', 'end'])
      await until(
        () => statusWord(app.page, id),
        (w) => w === 'done',
        `${id} to run again`,
      );
    expect(await count(app.page, 'end')).toBe(3);
    await screenshot(app.page, 'modes-triggered');
    await app.page.getByRole('tab', { name: 'Runs' }).click();
    const latest = app.page.locator('.gb-history-run').first();
    await latest.locator('.gb-history-row').click();
    await until(
      () => app.page.locator('.gb-runpage-mode').innerText(),
      (t) => t.includes('trigger · greetings'),
      'the run opened from the history',
    );
    await screenshot(app.page, 'modes-trigger-history');
  });
});

interface Spot {
  x: number;
  y: number;
}
const AB = 'a:out->b:in';
const BC = 'b:out->c:in';

async function centre(locator: Locator): Promise<Spot> {
  const box = await locator.boundingBox();
  if (!box) throw new Error('not shown');
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

/** Where each wire's reroute dot and nodes a and b are on the screen, from node c (c never moves here; the view may). */
async function spots(): Promise<Record<'ab' | 'bc' | 'a' | 'b', Spot>> {
  const origin = await centre(node(app.page, 'c'));
  const from = async (locator: Locator): Promise<Spot> => {
    const at = await centre(locator);
    return { x: at.x - origin.x, y: at.y - origin.y };
  };
  const dot = (edge: string): Locator => app.page.locator(`.gb-reroute[data-edge="${edge}"]`);
  return {
    ab: await from(dot(AB)),
    bc: await from(dot(BC)),
    a: await from(node(app.page, 'a')),
    b: await from(node(app.page, 'b')),
  };
}

type Spots = Awaited<ReturnType<typeof spots>>;

/** How far each moved since `before`. */
async function movedSince(before: Spots): Promise<Spots> {
  const now = await spots();
  const by = (k: keyof Spots): Spot => ({ x: now[k].x - before[k].x, y: now[k].y - before[k].y });
  return { ab: by('ab'), bc: by('bc'), a: by('a'), b: by('b') };
}

/** Drags from the middle of `handle` by (dx, dy) on the screen with the mouse, as a person does. */
async function dragBy(handle: Locator | Spot, dx: number, dy: number): Promise<void> {
  const from = 'x' in handle ? handle : await centre(handle);
  await app.page.mouse.move(from.x, from.y);
  await app.page.mouse.down();
  await app.page.mouse.move(from.x + dx, from.y + dy, { steps: 10 });
  await app.page.mouse.up();
}

const STILL = { x: 0, y: 0 };
const near = (moved: Spot, expected: Spot): boolean =>
  Math.abs(moved.x - expected.x) <= 2 && Math.abs(moved.y - expected.y) <= 2;

describe('reroute points when nodes move', () => {
  it('stay put when one end of their wire moves, and go along when both ends move together (a selection, a group)', async () => {
    await openApp(await app.freshBrowser(), app.server, 'reroute.json');
    const title = (id: string): Locator => node(app.page, id).locator('.gb-title');

    // One node dragged: both of its wires keep their points where the person put them.
    let before = await spots();
    await dragBy(title('b'), 0, 90);
    let moved = await movedSince(before);
    expect(moved.b.y).toBeGreaterThan(60);
    expect(near(moved.ab, STILL), `a→b's point moved ${JSON.stringify(moved.ab)}`).toBe(true);
    expect(near(moved.bc, STILL), `b→c's point moved ${JSON.stringify(moved.bc)}`).toBe(true);

    // a and b selected and dragged together: the wire between them comes along, b→c's point stays.
    await title('a').click();
    await title('b').click({ modifiers: [mod] });
    before = await spots();
    await dragBy(title('b'), 60, -70);
    moved = await movedSince(before);
    expect(moved.a.x).toBeGreaterThan(40);
    expect(
      near(moved.ab, moved.a),
      `a→b's point moved ${JSON.stringify(moved.ab)}, the nodes ${JSON.stringify(moved.a)}`,
    ).toBe(true);
    expect(near(moved.bc, STILL), `b→c's point moved ${JSON.stringify(moved.bc)}`).toBe(true);
    await screenshot(app.page, 'modes-reroute-carried');

    // One undo puts the nodes and the point back.
    await app.page.keyboard.press(`${mod}+z`);
    moved = await until(
      () => movedSince(before),
      (m) => near(m.a, STILL),
      'the nodes back where they were',
    );
    expect(near(moved.ab, STILL), `a→b's point is ${JSON.stringify(moved.ab)} from where it was`).toBe(true);

    // Grouped, the frame dragged: its members' wire comes along.
    await title('a').click();
    await title('b').click({ modifiers: [mod] });
    await app.page.keyboard.press(`${mod}+g`);
    const frame = await app.page.locator('.react-flow__node-group').boundingBox();
    if (!frame) throw new Error('no group');
    before = await spots();
    await dragBy({ x: frame.x + 12, y: frame.y + frame.height - 12 }, 0, 80);
    moved = await movedSince(before);
    expect(moved.a.y).toBeGreaterThan(60);
    expect(
      near(moved.ab, moved.a),
      `a→b's point moved ${JSON.stringify(moved.ab)}, the group ${JSON.stringify(moved.a)}`,
    ).toBe(true);
    expect(near(moved.bc, STILL), `b→c's point moved ${JSON.stringify(moved.bc)}`).toBe(true);
    await screenshot(app.page, 'modes-reroute-group');

    // Saved: a→b's point kept its place beside a; b→c's is where it was put.
    await save(app.page);
    const saved = readJson(app.server, 'reroute.json') as unknown as SavedFile;
    const a = saved.nodes.find((n) => n.id === 'a')?.position as Spot;
    const ab = saved.edges.find((e) => e.target === 'b')?.points?.[0] as Spot;
    expect(a.y).toBeGreaterThan(40);
    expect(Math.abs(ab.x - a.x - 270)).toBeLessThan(0.3);
    expect(Math.abs(ab.y - a.y - 220)).toBeLessThan(0.3);
    expect(saved.edges.find((e) => e.target === 'c')?.points).toEqual([{ x: 590, y: 220 }]);
  });
});

interface SavedFile {
  nodes: { id: string; position: Spot }[];
  edges: { target: string; points?: Spot[] }[];
}

describe("a source's title", () => {
  it("has a step's room beside the run-again button: a long one is cut where a step's is, a short one shows whole", async () => {
    await openApp(app.page, app.server, 'titles.json');
    const title = (id: string) =>
      node(app.page, id)
        .locator('.gb-title')
        .evaluate((el) => {
          let next = el.nextElementSibling;
          while (next && next.getBoundingClientRect().width === 0) next = next.nextElementSibling;
          const right = el.getBoundingClientRect().right;
          return {
            width: el.clientWidth,
            cut: el.scrollWidth > el.clientWidth,
            gap: (next?.getBoundingClientRect().left ?? Infinity) - right,
            text: el.textContent,
          };
        });
    const [longSource, longStep, shortSource] = [
      await title('long_source'),
      await title('long_step'),
      await title('short_source'),
    ];
    expect(longSource.text).toBe(LONG);
    expect(longSource.cut, 'too long for any default-width node').toBe(true);
    expect(longSource.width, "a source's title has as much room as a step's").toBe(longStep.width);
    expect(longSource.gap, 'the title reaches the button after it').toBeLessThan(8);
    expect(shortSource, 'a short title whole').toMatchObject({ text: 'Hi', cut: false, width: longStep.width });
    for (const id of ['long_source', 'short_source']) {
      const button = await app.page.getByRole('button', { name: `run ${id} again` }).boundingBox();
      const header = await node(app.page, id).locator('.gb-node-header').boundingBox();
      const frame = await node(app.page, id).boundingBox();
      if (!button || !header || !frame) throw new Error(`${id}'s run-again button is not shown`);
      expect(button.y, 'below the header, beside the output').toBeGreaterThanOrEqual(header.y + header.height - 1);
      expect(button.x + button.width).toBeLessThan(frame.x + frame.width / 2);
    }
    await screenshot(app.page, 'modes-source-titles');
  });
});
