/**
 * Issue 40: the dashboard in Debian's chromium (playwright-core) against one real daemon:
 * the owner logs in from `jobtap web`'s URL; every view renders real data (jobs that ran, a
 * real condor-cron probe script, a condor-router route); state changes arrive live; actions
 * (release, urgency, cancel, plugin load/remove, queue stop/start) work through the page's
 * own confirmation; HTML and script payloads in job names, arguments, ClassAd strings and
 * hook output stay text (no dialog fires); a missing job and a missing session get clear
 * pages. Screenshots land in test/web/screenshots/.
 */
import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { chromiumPath, launch, openPage, shot, type Watched } from "./browser.js";
import { join } from "node:path";
import { ROOT } from "../e2e/harness.js";
import { dispose, instance, jobtap, ownerLogin, type Instance } from "./instance.js";
import { P1, P2, setupFiles } from "./payloads.js";

const chrome = chromiumPath();

describe.skipIf(!chrome)("dashboard: the owner's views in chromium", { timeout: 120_000 }, () => {
  let i: Instance;
  let browser: Browser;
  let w: Watched;
  let xss: string;
  let held: string;
  const cli = (args: string[]) => jobtap(i, args);
  const page = () => w.page;
  const go = async (hash: string, selector: string) => {
    await page().evaluate(`location.hash = ${JSON.stringify(hash)}`);
    await page().waitForSelector(selector);
  };

  beforeAll(async () => {
    i = await instance((top) => setupFiles(top));
    browser = await launch(chrome as string);
    // A job whose name, arguments, ClassAd string and output carry the payloads; it runs for real.
    xss = await cli(["submit", "--job-name", P1, "--classad", `Note = ${JSON.stringify(P2)}`, "sh", "-c", `echo '${P2}'; echo '${P1}' >&2`, P2]);
    await cli(["wait", xss]);
    held = await cli(["submit", "--urgency", "0", "--job-name", "held-one", "sleep", "300"]);
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state !== "fail" || !w) return;
    await shot(w.page, `failed-${ctx.task.name.slice(0, 20).replace(/\W+/g, "-")}`);
    console.error(`page errors: ${JSON.stringify(w.errors)}\npage text: ${await w.page.textContent("body")}`);
  });
  afterAll(async () => {
    await browser?.close();
    await dispose(i);
  });

  it("logs in from the URL `jobtap web` prints and lists real jobs, payloads as text", async () => {
    w = await openPage(browser);
    await page().goto(await ownerLogin(i));
    await page().waitForSelector(`#jobs tr[data-id="${held}"]`);
    expect(page().url()).not.toContain("login=");
    expect(await page().textContent("#who")).toContain("(owner)");
    await page().selectOption("select[name=state]", "inactive");
    await page().click("form.filters button[type=submit]");
    const row = page().locator(`#jobs tr[data-id="${xss}"]`);
    await row.waitFor();
    expect(await row.locator("td.name").textContent()).toBe(P1);
    expect(await page().locator("main img, main script").count()).toBe(0);
    await shot(page(), "queue");
    expect(w.dialogs).toEqual([]);
  });

  it("the job view: timeline with time per state, why, job ad, jobspec and output, payloads as text", async () => {
    await go(`#/job/${xss}`, "#timeline table");
    // The table is drawn at once and filled as the eventlog streams in.
    await until(async () => (await page().textContent("#timeline"))?.includes("CLEANUP") ?? false, "the timeline's CLEANUP row");
    const timeline = await page().textContent("#timeline");
    for (const state of ["DEPEND", "SCHED", "RUN", "CLEANUP"]) expect(timeline).toContain(state);
    await page().waitForSelector("#jobad");
    expect(await page().textContent("#jobad")).toContain(P2.replace(/"/g, '\\"'));
    expect(await page().textContent("#jobspec")).toContain(P2.replace(/"/g, '\\"'));
    await until(async () => !/Loading/.test((await page().textContent("#out-stdout")) ?? "Loading"), "the stdout tail");
    expect(await page().textContent("#out-stdout")).toContain(P2);
    expect(await page().textContent("#out-stderr")).toContain(P1);
    expect(await page().textContent("h1")).toContain(xss);
    expect(await page().locator("main img, main script").count()).toBe(0);
    await shot(page(), "job");
    expect(w.dialogs).toEqual([]);
  });

  it("actions on a job: release and urgency through the page's confirmation, then cancel; the state arrives live", async () => {
    await go(`#/job/${held}`, "#act-h");
    await page().click("text=Release");
    await page().click("#confirm-yes");
    await page().waitForSelector("#status:text('released')");
    await expectUrgency(held, 16);
    await page().fill("#urgency-input", "20");
    await page().click("text=Set urgency");
    await page().click("#confirm-no");
    await expectUrgency(held, 16);
    await page().click("text=Cancel job");
    await page().click("#confirm-yes");
    await until(async () => (await page().textContent("#job-state")) === "INACTIVE", "the job view's state to become INACTIVE");
    expect(w.dialogs).toEqual([]);
  });

  it("the queue gets state changes live from /api/v1/events, and the owner stops and starts the queue", async () => {
    const running = await cli(["submit", "--job-name", "live-one", "sleep", "300"]);
    await go("#/queue", `#jobs tr[data-id="${held}"], #jobs tr`);
    await page().selectOption("select[name=state]", "active");
    await page().click("form.filters button[type=submit]");
    await page().waitForSelector(`#jobs tr[data-id="${running}"][data-state="RUN"]`);
    await cli(["cancel", running]);
    // No reload: the row changes from the events stream.
    await page().waitForSelector(`#jobs tr[data-id="${running}"]:is([data-state="CLEANUP"], [data-state="INACTIVE"])`);
    await page().click("text=Stop the default queue");
    await page().click("#confirm-yes");
    await page().waitForSelector("text=Start the default queue");
    expect((await i.owner.call("plugin.call", { plugin: "update-queue", method: "status", payload: {} }) as { queues: Record<string, { started: boolean }> }).queues[""]?.started).toBe(false);
    await page().click("text=Start the default queue");
    await page().click("#confirm-yes");
    await page().waitForSelector("text=Stop the default queue");
  });

  it("slots with the cron-published attributes, the cron job's output and the route, payloads as text", async () => {
    await go("#/slots", "#slots");
    await until(async () => (await page().textContent("#slots"))?.includes("WebProbe = 42") ?? false, "WebProbe in the slots table");
    expect(await page().textContent("#slots")).toContain(`Motd = ${JSON.stringify(P1)}`);
    expect(await page().textContent("#machine-ad")).toContain("TotalSlots");
    await shot(page(), "slots");
    await go("#/cron", "#cron");
    expect(await page().textContent("#cron")).toContain("motd");
    expect(await page().textContent("main pre.output")).toContain(P1);
    await shot(page(), "cron");
    await go("#/router", "#routes");
    expect(await page().textContent("#routes")).toContain("Spill");
    await shot(page(), "router");
    expect(await page().locator("main img, main script").count()).toBe(0);
    expect(w.dialogs).toEqual([]);
  });

  it("charts of the last hour as inline SVG", async () => {
    await go("#/charts", "svg.chart");
    expect(await page().locator("svg.chart").count()).toBe(3);
    expect(await page().locator("svg.chart polyline").count()).toBeGreaterThanOrEqual(2 + 5 + 4);
    expect(await page().textContent("main")).toContain("depth.RUN");
    await shot(page(), "charts");
  });

  it("plugins: query, load and remove through confirmation, and the live trace", async () => {
    await go("#/plugins", "text=Query condor-cron");
    await page().click("text=Query condor-cron");
    await until(async () => (await page().textContent("#plugin-query"))?.includes('"jobs"') ?? false, "condor-cron's query answer");
    await page().fill("input[name=path]", join(ROOT, "test", "fixtures", "plugins", "annotate.js"));
    await page().click("form[aria-label='Load a plugin'] button");
    await page().click("#confirm-yes");
    await page().waitForSelector("text=Remove annotate.js");
    await page().click("text=Start trace");
    await cli(["submit", "true"]);
    await page().waitForSelector("#trace li");
    await page().click("text=Stop trace");
    await page().click("text=Remove annotate.js");
    await page().click("#confirm-yes");
    await until(async () => !(await page().textContent("main table"))?.includes("annotate.js"), "annotate.js gone from the list");
    expect((await i.owner.call("plugin.list", {})).plugins.map((p) => p.name)).not.toContain("annotate.js");
    await shot(page(), "plugins");
  });

  it("a job id that does not exist gets a clear page; a bad login code and no session get the login page", async () => {
    await go("#/job/ƒ2222222", "h1:text('Not found')");
    expect(await page().textContent("main")).toContain("Job ƒ2222222 does not exist");
    await shot(page(), "no-such-job");
    const fresh = await openPage(browser);
    await fresh.page.goto(`${i.url}/#login=not-a-code`);
    await fresh.page.waitForSelector("h1:text('Log in to jobtap')");
    expect(await fresh.page.textContent("main")).toContain("jobtap web");
    await fresh.page.context().close();
    const none = await openPage(browser);
    await none.page.goto(`${i.url}/#/queue`);
    await none.page.waitForSelector("h1:text('Log in to jobtap')");
    expect(await none.page.textContent("main")).toContain("no session yet");
    await shot(none.page, "login");
    expect(none.errors).toEqual([]);
    await none.page.context().close();
  });

  it("works from the keyboard: skip link, links, the confirmation dialog (Escape cancels)", async () => {
    await go("#/queue", "#jobs tbody tr");
    await page().reload(); // focus back at the top of the document; the session stays
    await page().waitForSelector("#jobs tbody tr");
    await page().keyboard.press("Tab");
    expect(await page().evaluate("document.activeElement.textContent")).toBe("Skip to content");
    await page().keyboard.press("Enter");
    expect(await page().evaluate("document.activeElement.id")).toBe("main");
    expect(await page().evaluate("location.hash")).toBe("#/queue");
    await page().focus("text=Stop the default queue");
    await page().keyboard.press("Enter");
    expect(await page().evaluate("document.activeElement.id")).toBe("confirm-no");
    await page().keyboard.press("Escape");
    expect(await page().locator("#confirm[open]").count()).toBe(0);
    expect((await i.owner.call("plugin.call", { plugin: "update-queue", method: "status", payload: {} }) as { queues: Record<string, { started: boolean }> }).queues[""]?.started).toBe(true);
    for (const el of await page().locator("main input, main select").all()) expect(await el.evaluate((e: { closest(s: string): unknown }) => !!e.closest("label"))).toBe(true);
  });

  it("works at a phone's 390 px width without sideways scrolling of the page", async () => {
    const phone = await openPage(browser, 390);
    await phone.page.goto(await ownerLogin(i));
    await phone.page.waitForSelector("#jobs tbody tr");
    expect(await phone.page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await shot(phone.page, "queue-390");
    await phone.page.evaluate(`location.hash = ${JSON.stringify(`#/job/${xss}`)}`);
    await phone.page.waitForSelector("#timeline table");
    expect(await phone.page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await shot(phone.page, "job-390");
    await phone.page.context().close();
  });

  /** Polls a page condition (waitForFunction would eval a string, which the page's CSP forbids). */
  async function until(cond: () => Promise<boolean>, what: string): Promise<void> {
    for (let n = 0; n < 300; n++) {
      if (await cond()) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  async function expectUrgency(id: string, urgency: number): Promise<void> {
    for (let n = 0; n < 100; n++) {
      if ((await i.owner.call("info", { id })).job.urgency === urgency) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`job ${id}: urgency never became ${urgency}`);
  }
});
