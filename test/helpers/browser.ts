import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';

// Real Chromium for the browser suites: Debian's package driven by puppeteer-core (no
// browser download), headless, with a profile of its own that is removed afterwards;
// and a second loopback origin to serve host pages from.

export const CHROMIUM = '/usr/bin/chromium';

/** Why the browser suites cannot run here, or null. */
export function browserUnavailable(): string | null {
  return existsSync(CHROMIUM) ? null : `${CHROMIUM} not installed (apt-get install chromium; scripts/setup installs it)`;
}

export interface TestBrowser {
  browser: Browser;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'runbox-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir: profile,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return {
    browser,
    close: async () => {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
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
