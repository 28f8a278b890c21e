import { describe, expect, it } from "vitest";
import { hostWith, startSubmit, until } from "./isolate-helpers.js";

for (const isolate of [false, true]) {
  describe(`p.jobIds and p.submit${isolate ? " (isolated)" : ""}`, () => {
    it("list the active jobs and submit a new one as the given user", async () => {
      const h = await hostWith([["iso-submit.js", isolate ? { isolate: { heapMb: 64 }, deadlineMs: 5000 } : {}]]);
      const first = await startSubmit(h, "first", 1000)();
      let out: { seen: string[]; submitted: string } | undefined;
      void h.plugins.callService("iso-submit.js", "spawn", {}, { userid: h.manager.owner, owner: true }).then((v) => (out = v as typeof out));
      await until(h, () => out !== undefined);
      expect(out!.seen).toEqual([String(first)]);
      const made = h.manager.jobs().find((j) => String(j.id) === out!.submitted);
      expect(made).toMatchObject({ userid: 4242, name: "first" });
    });
  });
}
