/// <reference lib="dom" />
// Functions passed to page.evaluate run in the browser: they are typed against the DOM.
import { readFileSync } from 'node:fs';
import { Browser, chromium, Page } from 'playwright-core';

/** Debian's Chromium (.ci/run installs it); playwright-core never downloads a browser. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * A headless Chromium. Its profile is fresh: playwright's launch gives every browser a new
 * temporary --user-data-dir of its own (and refuses one passed in args), removed on close.
 */
export async function launchChromium(): Promise<{ browser: Browser; close: () => Promise<void> }> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    browser,
    close: () => browser.close(),
  };
}

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/**
 * axe-core's serious and critical violations on the page. axe is evaluated through the DevTools
 * protocol (not a <script> tag, which the console's CSP rightly refuses).
 */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (c: Document) => Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run(document)).violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(({ id, impact, help, nodes }) => ({ id, impact, help, nodes: nodes.map((n) => ({ target: n.target })) }));
}

/**
 * The texts inside `selector` that wrap onto lines all narrower than `minWidth` px: a table cell
 * squeezed until its words break every few characters. Text on one line passes at any width, and
 * so does a long token that must wrap in a box of a readable width.
 */
export async function crampedTexts(page: Page, selector: string, minWidth = 120): Promise<string[]> {
  return page.evaluate(
    ({ selector, minWidth }) => {
      const cramped: string[] = [];
      for (const box of Array.from(document.querySelectorAll(selector))) {
        const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const range = document.createRange();
          range.selectNodeContents(node);
          const lines = Array.from(range.getClientRects()).filter((line) => line.width > 0);
          if (lines.length > 1 && Math.max(...lines.map((line) => line.width)) < minWidth)
            cramped.push(node.textContent ?? '');
        }
      }
      return cramped;
    },
    { selector, minWidth },
  );
}

/**
 * The cells inside `selector` whose text wraps inside a word: a line that ends on a letter or digit
 * followed by a letter or digit on the next ("invoice.payment.reco|nciled"), rather than after a
 * separator or space. Each character's line is read from its own Range, across the text nodes
 * a cell is made of (`<wbr>` splits them).
 */
export async function midWordBreaks(page: Page, selector: string): Promise<string[]> {
  return page.evaluate((selector) => {
    const broken: string[] = [];
    for (const cell of Array.from(document.querySelectorAll(selector))) {
      const chars: { char: string; top: number }[] = [];
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = node.textContent ?? '';
        for (let i = 0; i < text.length; i++) {
          const range = document.createRange();
          range.setStart(node, i);
          range.setEnd(node, i + 1);
          const rect = range.getClientRects()[0];
          if (rect) chars.push({ char: text[i]!, top: rect.top });
        }
      }
      for (let i = 1; i < chars.length; i++) {
        const [before, after] = [chars[i - 1]!, chars[i]!];
        if (after.top > before.top + 1 && /[\p{L}\p{N}]/u.test(before.char) && /[\p{L}\p{N}]/u.test(after.char)) {
          broken.push(cell.textContent ?? '');
          break;
        }
      }
    }
    return broken;
  }, selector);
}
