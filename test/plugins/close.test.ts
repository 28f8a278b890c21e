/**
 * Nothing a plugin arms outlives it: timers set through `p.clock` are cleared when the
 * plugin is removed, and closing the manager unloads every plugin (builtins included),
 * running aux destructors, so a daemon's event loop can end.
 */
import { describe, expect, it } from "vitest";
import { createTestHost } from "../../src/testhost.js";
import type { PluginContext } from "../../src/plugin.js";

describe("plugin teardown", () => {
  it("a removed plugin's pending timers never fire", async () => {
    let fired = 0;
    const h = await createTestHost({
      builtins: false,
      plugin: (p: PluginContext) => {
        p.clock.setTimeout(() => fired++, 1000);
        const t = p.clock.setTimeout(() => fired++, 1000);
        p.clock.clearTimeout(t);
      },
    });
    // The manager keeps its own timer (the periodic job policy's interval): count the plugin's.
    const withPlugin = h.clock.pending();
    h.plugins.remove("test-plugin");
    expect(h.clock.pending()).toBe(withPlugin - 1);
    await h.advance(2000);
    expect(fired).toBe(0);
    await h.close();
  });

  it("closing the manager unloads builtins and clears a pending begin-time timer", async () => {
    const h = await createTestHost();
    const at = (h.clock.now() + 3600_000) / 1000;
    const id = await h.submit({ dependencies: [{ scheme: "begin-time", value: at }] });
    expect(h.job(id).state).toBe("DEPEND");
    expect(h.clock.pending()).toBeGreaterThan(0);
    await h.close();
    expect(h.plugins.list({ all: true })).toEqual([]);
    expect(h.clock.pending()).toBe(0);
  });
});
