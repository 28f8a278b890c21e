import { describe, expect, it } from "vitest";
import { closeAfterEach } from "../closing.js";
import type { PluginContext } from "../../src/plugin.js";
import { makeHost } from "../plugins/helpers.js";
import { host, rejected, type TestHost } from "./helpers.js";

let h: TestHost | undefined;
closeAfterEach(() => h);

const R = { version: 1, execution: { R_lite: [{ rank: "0", children: { core: "0" } }], starttime: 0, expiration: 0 } };
const PROCESS_UID = process.getuid?.() ?? 0;

describe("p.owner: the instance owner", () => {
  it("is the manager's owner, seen by plugins and used by alloc-bypass", async () => {
    const owner = PROCESS_UID + 4242;
    let seen: number | undefined;
    const t = (h = await host({}, { owner, plugin: (p: PluginContext) => void (seen = p.owner) }));
    expect(seen).toBe(owner);
    await t.plugins.load("alloc-bypass");
    const id = await t.submit({ userid: owner, runDuration: 1, system: { "alloc-bypass": { R } } });
    expect((await t.runToCompletion(id)).result).toBe("COMPLETED");
    // The process uid is not the instance owner here: a guest.
    expect(await rejected(t, { userid: PROCESS_UID, system: { "alloc-bypass": { R } } })).toBe(
      "Guest user cannot use alloc bypass",
    );
  });

  it("gives services the owner role for the owner's uid (post-event), and only for it", async () => {
    const owner = PROCESS_UID + 4242;
    const t = (h = await host({}, { owner }));
    const id = await t.submit({ runDuration: 100 });
    const post = { id: String(id), name: "note" };
    expect(await t.plugins.callService("post-event", "post", post, { userid: owner, owner: false })).toEqual({});
    expect(t.events(id)).toContain("note");
    await expect(
      t.plugins.callService("post-event", "post", post, { userid: PROCESS_UID, owner: false }),
    ).rejects.toThrow("Request requires owner credentials");
  });

  it("comes from ManagerPort.owner when the host has no owner option, else the process uid", async () => {
    const { host: bare, mgr } = makeHost();
    const owners: number[] = [];
    await bare.loadDefinition("who", (p) => {
      owners.push(p.owner);
      Object.assign(mgr, { owner: 77 });
      owners.push(p.owner);
    });
    expect(owners).toEqual([PROCESS_UID, 77]);
  });
});
