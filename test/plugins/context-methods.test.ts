/**
 * The plugin context's method table (context-methods.ts) is its one definition: the
 * in-process context has exactly its members, an isolated worker's proxy has exactly the
 * same (made from the table), the host can run every crossing row on the in-process
 * context, and a row's setup-only phase holds both ways.
 */
import { describe, expect, it } from "vitest";
import { contextRows, crossingRows, memberAt } from "../../src/plugins/context-methods.js";
import type { PluginContext } from "../../src/plugins/context.js";
import { createTestHost } from "../../src/testhost.js";
import { hostWith } from "./isolate-helpers.js";

const OWNER = { userid: process.getuid?.() ?? 0, owner: true };
const members = contextRows().filter(([, row]) => row.session !== true).map(([name]) => name).sort();

describe("the context method table", () => {
  it("lists every crossing row once in the protocol, plumbing apart", () => {
    const crossing = crossingRows().map(([name]) => name);
    expect(new Set(crossing).size).toBe(crossing.length);
    expect(crossingRows().filter(([, r]) => r.session === true).map(([n]) => n).sort()).toEqual(["auxTrack", "timerClear", "timerSet"]);
  });

  it("the host can run every crossing row on an in-process context", async () => {
    let p: PluginContext | undefined;
    const h = await createTestHost({ plugin: (ctx) => void (p = ctx), builtins: false });
    try {
      for (const [name, row] of crossingRows()) {
        if (row.session !== true) expect(typeof memberAt(p!, name), name).toBe("function");
      }
    } finally {
      await h.close();
    }
  });

  it.each([
    ["in process", false],
    ["isolated", true],
  ])("the context %s has exactly the table's members; setup-only rows hold after setup", async (_how, isolate) => {
    const h = await hostWith([["ctx-members.js", isolate ? { isolate: true, deadlineMs: 5000 } : {}]]);
    expect(await h.plugins.callService("ctx-members", "members", {}, OWNER)).toEqual(members);
    const setupOnly = contextRows().filter(([, r]) => r.phase === "setup").map(([n]) => n);
    expect(setupOnly).toEqual(["on", "setLoadSortOrder", "serviceRegister", "registerExecutor"]);
    const codes = await h.plugins.callService("ctx-members", "after-setup", setupOnly, OWNER);
    expect(codes).toEqual(setupOnly.map(() => "PLUGIN_PHASE"));
  });
});
