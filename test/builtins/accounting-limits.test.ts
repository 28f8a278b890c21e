import { afterEach, describe, expect, it } from "vitest";
import { acctHost, ALICE, BOB, call, DAVE, exampleTree } from "./accounting-helpers.js";
import { rejected, until, type TestHost } from "./helpers.js";

let h: TestHost;
afterEach(async () => {
  await h?.close();
});

describe("accounting: limits", () => {
  it("max-running-jobs holds a job in DEPEND with a named dependency and releases it as a job ends", async () => {
    h = await acctHost();
    await exampleTree(h);
    await call(h, "edit-user", { uid: ALICE, limits: { "max-running-jobs": 1 } });
    const a = await h.submit({ userid: ALICE, runDuration: 60 });
    const b = await h.submit({ userid: ALICE, runDuration: 60 });
    await h.advance(1000);
    expect(h.job(a).state).toBe("RUN");
    expect(h.job(b).state).toBe("DEPEND");
    expect(h.job(b).dependencies).toEqual(["accounting: max-running-jobs of user 1001 in bank physics"]);
    // another user of the same bank is not held
    const other = await h.submit({ userid: BOB, runDuration: 60 });
    await h.advance(1000);
    expect(h.job(other).state).toBe("RUN");
    await until(h, () => h.job(a).state === "INACTIVE");
    await h.advance(100);
    expect(h.job(b).state).toBe("RUN");
    expect(h.events(b)).toContain("dependency-remove");
  });

  it("a bank's max-cores holds jobs of every user below it; raising the limit releases them", async () => {
    h = await acctHost({}, { cores: 8 });
    await exampleTree(h);
    await call(h, "edit-bank", { name: "physics", limits: { "max-cores": 3 } });
    const a = await h.submit({ userid: ALICE, cores: 2, runDuration: 600 });
    const b = await h.submit({ userid: BOB, cores: 2, runDuration: 600 });
    const d = await h.submit({ userid: DAVE, cores: 2, runDuration: 600 });
    await h.advance(1000);
    expect([a, b, d].map((id) => h.job(id).state)).toEqual(["RUN", "DEPEND", "RUN"]);
    expect(h.job(b).dependencies).toEqual(["accounting: max-cores of bank physics"]);
    await call(h, "edit-bank", { name: "physics", limits: { "max-cores": 4 } });
    await h.advance(1000);
    expect(h.job(b).state).toBe("RUN");
    const shown = (await call(h, "show")) as { rows: Array<Record<string, unknown>> };
    expect(shown.rows.find((r) => r.name === "physics")).toMatchObject({ running: 2, active: 2, cores: 4, limits: { maxCores: 4 } });
  });

  it("max-active-jobs rejects at submit with the limit and the count, and admits again once one ends", async () => {
    h = await acctHost();
    await exampleTree(h);
    await call(h, "edit-user", { uid: DAVE, bank: "chem", limits: { "max-active-jobs": 2 } });
    const a = await h.submit({ userid: DAVE, runDuration: 10 });
    await h.submit({ userid: DAVE, runDuration: 10, urgency: 0 });
    expect(await rejected(h, { userid: DAVE })).toContain("max-active-jobs of user 1004 in bank chem reached: 2 active jobs, limit 2");
    await h.runToCompletion(a);
    await h.submit({ userid: DAVE });
  });
});

describe("accounting: bad input", () => {
  it("rejects jobs without an association, with an unknown bank, or a bank not theirs", async () => {
    h = await acctHost();
    await exampleTree(h);
    expect(await rejected(h, { userid: 4242 })).toContain("user 4242 has no accounting association");
    expect(await rejected(h, { userid: ALICE, system: { bank: "nope" } })).toContain('attributes.system.bank: unknown bank "nope"');
    expect(await rejected(h, { userid: ALICE, system: { bank: "chem" } })).toContain(
      'attributes.system.bank: user 1001 has no association with bank "chem" (banks: physics)',
    );
    expect(await rejected(h, { userid: ALICE, system: { bank: 7 } })).toContain("attributes.system.bank: must be a bank name, got 7");
  });

  it("charges a user with no association to [accounting].default-bank", async () => {
    h = await acctHost({ "default-bank": "chem" });
    await exampleTree(h);
    await h.submit({ userid: 4242 });
    const u = (await call(h, "usage", { uid: 4242 })) as { associations: Array<{ bank: string }> };
    expect(u.associations.map((x) => x.bank)).toEqual(["chem"]);
  });

  it("refuses bad changes naming the field, and changes nothing", async () => {
    h = await acctHost();
    await exampleTree(h);
    const before = await call(h, "export");
    await expect(call(h, "add-bank", { name: "x", parent: "root", shares: 0 })).rejects.toThrow("shares: must be an integer > 0, got 0");
    await expect(call(h, "add-bank", { name: "x", parent: "nope" })).rejects.toThrow('parent: unknown bank "nope"');
    await expect(call(h, "add-bank", { name: "x" })).rejects.toThrow('parent: required (the root bank is "root")');
    await expect(call(h, "edit-bank", { name: "physics", parent: "theory" })).rejects.toThrow('parent: moving "physics" under "theory" would make a cycle');
    await expect(call(h, "add-user", { uid: ALICE, bank: "ghost" })).rejects.toThrow('bank: unknown bank "ghost"');
    await expect(call(h, "edit-user", { uid: ALICE, shares: -2 })).rejects.toThrow("shares: must be an integer > 0, got -2");
    await expect(call(h, "edit-user", { uid: ALICE, limits: { "max-cores": "many" } })).rejects.toThrow('max-cores: must be an integer >= 0 (or -1 for no limit), got "many"');
    await expect(call(h, "delete-bank", { name: "theory" })).rejects.toThrow('bank: "theory" has users (1002, 1003): delete them first');
    await expect(call(h, "import", { banks: [{ name: "bio", parent: "root" }], users: [{ uid: 5, bank: "zoo" }] })).rejects.toThrow('users[0]: bank: unknown bank "zoo"');
    // unknown user or bank, shares that are not a positive integer
    await expect(call(h, "edit-user", { uid: 4242, shares: 2 })).rejects.toThrow("uid: user 4242 has no association");
    await expect(call(h, "delete-user", { uid: ALICE, bank: "chem" })).rejects.toThrow('user 1001: no association with bank "chem" (banks: physics)');
    await expect(call(h, "usage", { uid: 4242 })).rejects.toThrow("uid: user 4242 has no association");
    await expect(call(h, "edit-bank", { name: "ghost", shares: 2 })).rejects.toThrow('name: unknown bank "ghost"');
    await expect(call(h, "add-user", { uid: 4242, bank: "chem", shares: 1.5 })).rejects.toThrow("shares: must be an integer > 0, got 1.5");
    const held = await h.submit({ userid: ALICE, urgency: 0 });
    await expect(call(h, "delete-user", { uid: ALICE })).rejects.toThrow('uid: user 1001 has 1 active jobs in bank "physics"; cancel them or wait before deleting');
    await expect(call(h, "edit-bank", { name: "physics", parent: "chem" })).rejects.toThrow('parent: bank "physics" has 1 active jobs; a bank moves only when it has none');
    await expect(call(h, "import", { banks: [{ name: "physics", parent: "chem" }] })).rejects.toThrow('banks[0]: parent: bank "physics" has 1 active jobs; a bank moves only when it has none');
    expect(await call(h, "export")).toEqual(before);
    // changes are the owner's: a guest may look, not touch
    await expect(call(h, "add-bank", { name: "mine", parent: "root" }, ALICE)).rejects.toThrow("Request requires owner credentials");
    expect(await call(h, "usage", { uid: ALICE }, ALICE)).toMatchObject({ uid: ALICE });
    h.manager.cancel(held);
    await h.runToCompletion(held);
    await call(h, "delete-user", { uid: ALICE });
  });

  it("refuses an [accounting] table whose weights overflow the priority range, naming the key", async () => {
    await expect(acctHost({ weights: { "fair-share": 4294967295, age: 1, urgency: 0, queue: 0 } })).rejects.toThrow(
      "[accounting.weights]: the weights sum to 4294967296, over the priority range (max 4294967295)",
    );
    await expect(acctHost({ weights: { fairshare: 1 } })).rejects.toThrow("[accounting.weights].fairshare: unknown weight");
    await expect(acctHost({ "decay-half-life": "soon" })).rejects.toThrow("decay-half-life");
  });
});

describe("accounting: config check", () => {
  it("jobtap config check reports a bad [accounting] table when the plugin is listed", async () => {
    const { checkBuiltinConfig } = await import("../../src/plugins/builtins.js");
    const { BUILTINS, SHIPPED } = await import("../../plugins-builtin/index.js");
    const { acctConfig } = await import("./accounting-helpers.js");
    expect(checkBuiltinConfig(acctConfig({ "fair-share": "fifo" }), BUILTINS, SHIPPED)).toContain('[accounting].fair-share: must be "fair-tree" or "classic", got "fifo"');
    expect(checkBuiltinConfig({ accounting: { "fair-share": "fifo" } }, BUILTINS, SHIPPED)).toEqual([]);
  });
});
