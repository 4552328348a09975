// The page side of `python -m bench.frames`: opens the built app in headless Chromium
// (playwright-core, /usr/bin/chromium), records the gap between animation frames and the long
// tasks (> 50 ms) the browser reports, first for `idle` seconds with nothing running, then from
// clicking Run until the run ends. Prints one JSON line; bench/frames.py makes the figures.
//
//   node bench/frames_page.mjs URL WORKFLOW IDLE_SECONDS TIMEOUT_SECONDS

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const [url, workflow, idleText, timeoutText] = process.argv.slice(2);
const idleSeconds = Number(idleText ?? '3');
const timeoutSeconds = Number(timeoutText ?? '600');
const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Installed in the page: every frame's time, and every long task, from `start()` on. */
function recorder() {
  const state = { frames: [], long: [], on: false };
  const tick = (t) => {
    if (state.on) state.frames.push(t);
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  new PerformanceObserver((list) => {
    if (state.on) for (const entry of list.getEntries()) state.long.push([entry.startTime - state.frames[0], entry.duration]);
  }).observe({ type: 'longtask', buffered: false });
  window.__frames = {
    start() {
      state.frames = [];
      state.long = [];
      state.on = true;
    },
    stop() {
      state.on = false;
      const gaps = state.frames.slice(1).map((t, i) => t - state.frames[i]);
      return { gaps, long: state.long.map(([, d]) => d), longAt: state.long.map(([t]) => Math.round(t)) };
    },
  };
}

const status = (page) => page.evaluate(() => document.querySelector('[data-run-status]')?.getAttribute('data-run-status') ?? '');

async function measure(page, during) {
  await page.evaluate(() => window.__frames.start());
  const began = Date.now();
  await during();
  const seconds = (Date.now() - began) / 1000;
  return { ...(await page.evaluate(() => window.__frames.stop())), seconds };
}

const profile = mkdtempSync(join(tmpdir(), 'graphbook-frames-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  viewport: { width: 1440, height: 900 },
});
try {
  const page = await context.newPage();
  await page.addInitScript(recorder);
  await page.goto(`${url}#${workflow}`);
  await page.locator('.gb-connection-open').waitFor({ timeout: 60_000 });
  await page.locator('.gb-canvas[data-ready="true"]').waitFor({ timeout: 60_000 });
  // The console panel shows every log line as it comes: open it, as a person watching would.
  const consoleToggle = page.getByRole('button', { name: 'show the console' });
  if (await consoleToggle.count()) await consoleToggle.click();
  const idle = await measure(page, () => page.waitForTimeout(idleSeconds * 1000));
  // FRAMES_PROFILE=FILE: a CPU profile of the page during the run (chrome://inspect can open it).
  const profiling = process.env.FRAMES_PROFILE;
  const cdp = profiling ? await context.newCDPSession(page) : null;
  if (cdp) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 1000 });
    await cdp.send('Profiler.start');
  }
  const running = await measure(page, async () => {
    await page.getByRole('button', { name: 'run', exact: true }).click();
    const deadline = Date.now() + timeoutSeconds * 1000;
    let seen = '';
    while (!['completed', 'failed', 'stopped'].includes(seen)) {
      if (Date.now() > deadline) throw new Error(`the run did not end within ${timeoutSeconds} s (last status: ${seen})`);
      await page.waitForTimeout(250);
      seen = await status(page);
    }
    if (seen !== 'completed') throw new Error(`the run ended ${seen}`);
  });
  if (cdp && profiling) {
    const { profile: cpu } = await cdp.send('Profiler.stop');
    writeFileSync(profiling, JSON.stringify(cpu));
  }
  const shown = await page.locator('.gb-run-text').innerText();
  console.log(JSON.stringify({ idle, running, shown }));
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
