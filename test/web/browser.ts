/**
 * Driving Debian's chromium with playwright-core for the dashboard tests and bench: the
 * browser found on the system (never downloaded), a page that records dialogs, page errors
 * and console errors, and screenshots saved under test/web/screenshots/ (gitignored).
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";

const CANDIDATES = ["/usr/lib/chromium/chromium", "/usr/bin/chromium", "/usr/bin/chromium-browser"];
export const SCREENSHOTS = fileURLToPath(new URL("./screenshots/", import.meta.url));

/**
 * The chromium binary, or undefined when absent. Under JOBTAP_REQUIRE_CHROMIUM=1 (.ci/run)
 * absence throws, so CI fails instead of skipping the browser tests.
 */
export function chromiumPath(): string | undefined {
  const found = CANDIDATES.find((p) => existsSync(p));
  if (!found && process.env.JOBTAP_REQUIRE_CHROMIUM === "1") {
    throw new Error(`JOBTAP_REQUIRE_CHROMIUM=1 but no chromium at ${CANDIDATES.join(", ")} (apt-get install chromium)`);
  }
  return found;
}

/** Headless chromium; --no-sandbox because the tests run as root. */
export function launch(executablePath: string): Promise<Browser> {
  return chromium.launch({ executablePath, headless: true, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
}

/** What a page did that a test must see: dialogs (alert from an XSS), script errors. */
export interface Watched {
  page: Page;
  dialogs: string[];
  errors: string[];
}

/** A fresh context (its own sessionStorage) and page at `width` px wide. */
export async function openPage(browser: Browser, width = 1280): Promise<Watched> {
  const context = await browser.newContext({ viewport: { width, height: width < 600 ? 844 : 900 } });
  const page = await context.newPage();
  const w: Watched = { page, dialogs: [], errors: [] };
  page.on("dialog", (d) => {
    w.dialogs.push(`${d.type()}: ${d.message()}`);
    void d.dismiss();
  });
  page.on("pageerror", (e) => w.errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error") w.errors.push(m.text());
  });
  return w;
}

/** Saves a full-page screenshot as screenshots/NAME.png; returns its path. */
export async function shot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
