import { afterEach, describe, expect, it } from "vitest";
import { formatJobId } from "../../src/manager/base/ids.js";
import { host, type TestHost } from "./helpers.js";

let h: TestHost;
afterEach(async () => {
  await h?.close();
});

describe(".history", () => {
  it("lists the caller's own jobs newest first, with Python slices; purge removes", async () => {
    h = await host();
    const a = await h.submit({ userid: 0 });
    await h.advance(1000);
    const b = await h.submit({ userid: 0 });
    const other = await h.submit({ userid: 77 });
    const root = { userid: 0, owner: false };
    expect(await h.plugins.callService("history", "get", {}, root)).toEqual({ jobs: [formatJobId(b), formatJobId(a)] });
    expect(await h.plugins.callService("history", "get", { slice: "[1:]" }, root)).toEqual({ jobs: [formatJobId(a)] });
    expect(await h.plugins.callService("history", "get", { slice: "[::-1]" }, root)).toEqual({
      jobs: [formatJobId(a), formatJobId(b)],
    });
    expect(await h.plugins.callService("history", "get", {}, { userid: 77, owner: false })).toEqual({
      jobs: [formatJobId(other)],
    });
    await expect(h.plugins.callService("history", "get", { slice: "[a]" }, root)).rejects.toThrow('invalid slice "[a]"');
    await h.runToCompletion(a);
    expect(h.manager.purge(a)).toBe(true);
    expect(await h.plugins.callService("history", "get", {}, root)).toEqual({ jobs: [formatJobId(b)] });
  });
});

describe(".post-event", () => {
  it("lets the owner post an event to an active job; guests are refused", async () => {
    h = await host();
    const id = await h.submit({ urgency: 0 });
    const owner = { userid: h.manager.owner, owner: true };
    expect(await h.plugins.callService("post-event", "post", { id: formatJobId(id), name: "note", context: { x: 1 } }, owner)).toEqual({});
    expect(h.eventlog(id).at(-1)).toMatchObject({ name: "note", context: { x: 1 } });
    await expect(
      h.plugins.callService("post-event", "post", { id: formatJobId(id), name: "note" }, { userid: 5, owner: false }),
    ).rejects.toThrow("Request requires owner credentials");
    // Each failure is labelled once by the host, then says what was wrong.
    const post = (body: unknown) => h.plugins.callService("post-event", "post", body, owner);
    await expect(post({ id: "1234", name: "note" })).rejects.toThrow(/^plugin \.post-event: service post: unknown job ƒ[^:]*$/);
    await expect(post({ id: formatJobId(id), name: "" })).rejects.toThrow(
      /^plugin \.post-event: service post: name must be a non-empty string$/,
    );
    await expect(post({ id: formatJobId(id), name: "a b" })).rejects.toThrow(
      /^plugin \.post-event: service post: invalid event name "a b"$/,
    );
    h.manager.cancel(id);
    await h.runToCompletion(id);
    await expect(post({ id: formatJobId(id), name: "note" })).rejects.toThrow(
      new RegExp(`^plugin \\.post-event: service post: job ${formatJobId(id)} is inactive$`),
    );
  });
});

describe(".validate-duration", () => {
  it("rejects a duration that outlives [resource] expiration; bad values fail the config", async () => {
    const now = Date.UTC(2026, 0, 1) / 1000;
    h = await host({ resource: { expiration: now + 3600 } });
    await expect(h.submit({ system: { duration: 7200 } })).rejects.toThrow(
      "job duration (2h) exceeds remaining instance lifetime (1h)",
    );
    const ok = await h.submit({ system: { duration: 1800 } });
    expect(h.events(ok)).toContain("validate");
    await h.close();
    await expect(host({ resource: { expiration: "soon" } })).rejects.toThrow(
      '[resource].expiration: must be a Unix time in seconds >= 0, got "soon"',
    );
  });
});
