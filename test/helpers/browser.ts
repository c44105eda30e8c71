import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type ElementHandle, type KeyInput, type Page } from 'puppeteer-core';

// A real headless Chromium (Debian's package, driven by puppeteer-core; nothing is
// downloaded) with a fresh profile, and helpers that find things as a person does:
// by label, by visible text, by keyboard; and a second loopback origin to serve host
// pages from.

export const CHROMIUM = '/usr/bin/chromium';

export interface TestBrowser {
  browser: Browser;
  close(): Promise<void>;
}

/** Why no browser can run here, or null. */
export function browserUnavailable(): string | null {
  return existsSync(CHROMIUM) ? null : `${CHROMIUM} is not installed (npm run setup installs Debian's chromium)`;
}

export async function launchBrowser(): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'runbox-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Chromium's start on a loaded 2-core host has taken over puppeteer's default 30 s.
    timeout: 120_000,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profile}`,
    ],
  });
  return {
    browser,
    close: async () => {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: number;
}

/**
 * Runs axe-core in the page (evaluated through the DevTools protocol, which the
 * page's CSP does not govern) and returns the serious and critical violations.
 */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  const loaded = await page.evaluate(() => typeof (globalThis as { axe?: unknown }).axe !== 'undefined');
  if (!loaded) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: unknown[] }[] }> } }).axe;
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** The form control labelled `label` (its <label for> text, exactly). */
export async function byLabel(page: Page, label: string): Promise<ElementHandle<Element>> {
  const id = await page.evaluate((text) => {
    const l = [...document.querySelectorAll('label')].find((x) => x.textContent?.trim() === text);
    return l?.htmlFor ?? null;
  }, label);
  if (!id) throw new Error(`no field labelled ${JSON.stringify(label)} on ${page.url()}`);
  const el = await page.$(`#${id}`);
  if (!el) throw new Error(`label ${label} points at no element`);
  return el;
}

/** The link or button whose visible text is `text`, exactly. */
export async function byText(page: Page, text: string, selector = 'a, button'): Promise<ElementHandle<Element>> {
  const handles = await page.$$(selector);
  for (const h of handles) {
    if ((await h.evaluate((e) => (e.textContent ?? '').trim())) === text) return h;
  }
  throw new Error(`no ${selector} with text ${JSON.stringify(text)} on ${page.url()}`);
}

export async function fill(page: Page, label: string, value: string): Promise<void> {
  const el = await byLabel(page, label);
  await el.evaluate((e) => ((e as HTMLInputElement).value = ''));
  await el.type(value);
}

/** Presses `key` with Control held, as a user types a shortcut (Ctrl+Enter, Ctrl+D, Ctrl+A). */
export async function pressWithControl(page: Page, key: KeyInput): Promise<void> {
  await page.keyboard.down('Control');
  await page.keyboard.press(key);
  await page.keyboard.up('Control');
}

export async function clickAndWait(page: Page, el: ElementHandle<Element>): Promise<void> {
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), el.click()]);
}

/** Presses Tab until the focused element satisfies `match` (by its text, label or name); throws after `max` presses. */
export async function tabTo(page: Page, describe: string, match: (el: { text: string; name: string; tag: string; label: string }) => boolean, max = 60): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    const el = await page.evaluate(() => {
      const a = document.activeElement as HTMLElement & { name?: string; labels?: NodeListOf<HTMLLabelElement> };
      return {
        text: (a?.textContent ?? '').trim(),
        name: a?.name ?? '',
        tag: a?.tagName ?? '',
        label: a?.labels?.[0]?.textContent?.trim() ?? '',
      };
    });
    if (match(el)) return;
  }
  throw new Error(`Tab never reached ${describe}`);
}

/** data-field values inside `scope` (a CSS selector), as text. */
export async function fieldsIn(page: Page, scope: string): Promise<Record<string, string>> {
  return page.$eval(scope, (root) => Object.fromEntries([...root.querySelectorAll('[data-field]')].map((e) => [e.getAttribute('data-field')!, (e.textContent ?? '').trim()])));
}

export interface HostSite {
  /** http://127.0.0.2:PORT: an origin other than the API's 127.0.0.1. */
  origin: string;
  /** Serves `html` at `path` from now on. */
  page(path: string, html: string): string;
  close(): Promise<void>;
}

/** A site on a second loopback address that embeds things, as a blog would. */
export async function hostSite(address = '127.0.0.2'): Promise<HostSite> {
  const pages = new Map<string, string>();
  const server: Server = createServer((req, res) => {
    const html = pages.get(req.url ?? '/');
    res.writeHead(html === undefined ? 404 : 200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(html ?? 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const origin = `http://${address}:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    page: (path, html) => {
      pages.set(path, html);
      return origin + path;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
