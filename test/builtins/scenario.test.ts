import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { parseToml } from "../../src/plugins/config.js";
import { host, rejected, type TestHost } from "./helpers.js";

let h: TestHost;
afterEach(async () => {
  await h?.close();
});

const config = parseToml(readFileSync(new URL("./scenarios/queues.toml", import.meta.url), "utf8"), "queues.toml");

describe("scenario: queues.toml", () => {
  it("applies the TOML limits per queue and the default queue", async () => {
    h = await host(config);
    expect(await rejected(h, { system: { queue: "debug", duration: 7200 } })).toBe(
      "requested duration (2h) exceeds policy limit of 1h for queue debug",
    );
    expect(await rejected(h, { cores: 2, system: { queue: "debug", duration: 60 } })).toBe(
      "requested ncores (2) exceeds policy limit of 1 for queue debug",
    );
    // No queue named: the default queue (batch) and the general limits apply.
    expect(await rejected(h, { system: { duration: 9 * 3600 } })).toBe(
      "requested duration (9h) exceeds policy limit of 8h for queue batch",
    );
    const id = await h.submit({ cores: 4, runDuration: 5, system: { duration: 3600 } });
    await h.runToCompletion(id);
    expect(h.events(id)).toEqual([
      "submit", "validate", "depend", "priority", "alloc", "start", "finish", "release", "free", "clean",
    ]);
  });
});
