/**
 * Issue 40, who sees what in the dashboard: two real guest users (jtwu1, jtwu2, made with
 * useradd) log in with `jobtap web` run as themselves. A guest has no owner views in the
 * navigation, gets an "Owner only" page at an owner view's address (and the API refuses it
 * anyway), acts on its own job but is shown no actions, and no data, for another's; the
 * queue offers it no queue start/stop. A revoked session sends the page to the login view.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobtapAs, realUser, type User } from "../e2e/users.js";
import { chromiumPath, launch, openPage, shot, type Watched } from "./browser.js";
import { dispose, guestLogin, instance, type Instance } from "./instance.js";

const chrome = chromiumPath();
const alice = realUser("jtwu1");
const bob = realUser("jtwu2");
const HOLD = ["--setattr", "exec.test.run_duration=1h"];

describe.skipIf(!chrome || !alice || !bob)("dashboard: a guest's view", { timeout: 120_000 }, () => {
  const a = alice as User;
  const b = bob as User;
  let i: Instance;
  let browser: Browser;
  let w: Watched;
  let mine: string;
  let theirs: string;
  const submitAs = async (u: User, args: string[]) => {
    const r = await jobtapAs(u, i.socket, ["submit", ...args]);
    expect(r.stderr).toBe("");
    return r.stdout.trim();
  };
  const go = async (hash: string, selector: string) => {
    await w.page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
    await w.page.waitForSelector(selector);
  };

  beforeAll(async () => {
    i = await instance();
    browser = await launch(chrome as string);
    mine = await submitAs(a, [...HOLD, "--urgency", "hold", "--job-name", "alices", "sleep", "1"]);
    theirs = await submitAs(b, [...HOLD, "--job-name", "bobs", "sleep", "1"]);
    w = await openPage(browser);
    await w.page.goto(await guestLogin(i, a));
    await w.page.waitForSelector(`#jobs tr[data-id="${mine}"]`);
  });
  afterAll(async () => {
    await browser?.close();
    await dispose(i);
  });

  it("has no owner views: not in the navigation, an Owner only page by URL, and the API refuses", async () => {
    expect(await w.page.textContent("#who")).toBe("jtwu1");
    expect(await w.page.locator("#nav a").allTextContents()).not.toContain("Plugins");
    expect(await w.page.locator("main button", { hasText: "default queue" }).count()).toBe(0);
    await go("#/plugins", "h1:text('Owner only')");
    await shot(w.page, "guest-owner-only");
    const status = await w.page.evaluate(`fetch("/api/v1/plugins", { headers: { authorization: "Bearer " + sessionStorage.getItem("jobtap.token") } }).then((r) => r.status)`);
    expect(status).toBe(403);
  });

  it("acts on its own job (release, confirmed) and sees neither actions nor data of another's", async () => {
    await go(`#/job/${mine}`, "#act-h");
    await w.page.click("text=Release");
    await w.page.click("#confirm-yes");
    await w.page.waitForSelector("#status:text('released')");
    for (let n = 0; n < 100 && (await i.owner.call("info", { id: mine })).job.urgency !== 16; n++) await new Promise((r) => setTimeout(r, 100));
    expect((await i.owner.call("info", { id: mine })).job.urgency).toBe(16);
    await go(`#/job/${theirs}`, "h1:text('Not allowed')");
    expect(await w.page.locator("#act-h").count()).toBe(0);
    expect(await w.page.textContent("main")).not.toContain("bobs");
    await shot(w.page, "guest-others-job");
  });

  it("a revoked session sends the page to the login view, never a stack trace", async () => {
    const { tokens } = await i.owner.call("token.list", {});
    for (const t of tokens.filter((t) => t.userid === a.uid && !t.revoked)) await i.owner.call("token.revoke", { id: t.id });
    await go("#/queue", "h1:text('Log in to jobtap')");
    expect(await w.page.textContent("main")).toContain("jobtap web");
    await shot(w.page, "guest-revoked");
    expect(w.dialogs).toEqual([]);
  });
});
