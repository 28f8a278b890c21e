/**
 * The CallInfo (a handler's second argument) is made only for handlers that can read it:
 * which ones can is decided from the handler's source, and must err on the side of "can".
 */
import { describe, expect, it } from "vitest";
import type { CallInfo } from "../../src/manager/port/topics.js";
import { takesOnlyFirstArg } from "../../src/plugins/stack.js";
import { makeHost } from "./helpers.js";

/** A function from its exact source text (no transpiler between the text and the test). */
const fn = (src: string): unknown => new Function(`return (${src});`)();

describe("takesOnlyFirstArg", () => {
  it("is true only for arrows with at most one plain parameter", () => {
    for (const src of ["(a) => a", "a => a", "async a => a", "async (a) => a", "() => 1", "({ id }) => id", "([a, b]) => a", "({ a, b: [c, d] }) => c", "(\n  job\n) => job", "$ => $"]) {
      expect([src, takesOnlyFirstArg(fn(src))]).toEqual([src, true]);
    }
  });

  it("is false for anything that could read a second argument, or that it cannot tell", () => {
    const lengthHidden = fn("(a, b) => b") as () => unknown;
    Object.defineProperty(lengthHidden, "length", { value: 0 });
    const cases: Array<[string, unknown]> = [
      ...["(a, b) => b", "(a, b = 1) => b", "(a = 1) => a", "({ a = 1 }) => a", "(a, ...r) => r", "(...r) => r", "(a,) => a", "(a /*, b */) => a", "(a // b\n) => a", "({ 'x,y': a }) => a", "function (a) { return arguments[1]; }", "function named(a) { return a; }", "async function (a) { return a; }", "class {}"].map((s): [string, unknown] => [s, fn(s)]),
      ["method", ({ m(a: unknown) { return a; } }).m],
      ["bound", ((a: unknown) => a).bind(null)],
      ["proxied", new Proxy((a: unknown) => a, {})],
      ["native", Math.max],
      ["length overridden", lengthHidden],
      ["not a function", { length: 1 }],
    ];
    for (const [name, f] of cases) expect([name, takesOnlyFirstArg(f)]).toEqual([name, false]);
  });
});

describe("CallInfo", () => {
  it("reaches every handler that can read it, one object per call, alongside handlers that cannot", async () => {
    const { host, mgr } = makeHost();
    const seen: Array<[string, unknown]> = [];
    const keep = fn("(seen) => (a, info) => void seen.push(['two', info])") as (s: typeof seen) => unknown;
    const rest = fn("(seen) => (a, ...r) => void seen.push(['rest', r[0]])") as (s: typeof seen) => unknown;
    const args = fn("(seen) => function (a) { seen.push(['arguments', arguments[1]]); }") as (s: typeof seen) => unknown;
    const one = fn("(seen) => (a) => void seen.push(['one', a.id])") as (s: typeof seen) => unknown;
    for (const [name, make] of [["one-a", one], ["two", keep], ["one-b", one], ["rest", rest], ["arguments", args]] as const) {
      await host.loadDefinition(name, (p) => p.on("job.state.run", make(seen) as never));
    }
    const id = mgr.add("RUN", 1);
    const r = host.callJob("job.state.run", mgr.lookup(id)!);
    expect(r).toMatchObject({ handled: 5 });
    expect(seen.map(([who]) => who)).toEqual(["one", "two", "one", "rest", "arguments"]);
    const infos = seen.filter(([who]) => who !== "one").map(([, info]) => info as CallInfo);
    expect(infos[0]).toEqual({ topic: "job.state.run", id });
    expect(new Set(infos).size).toBe(1);
    // The next call makes its own.
    host.callJob("job.state.run", mgr.lookup(id)!);
    expect(seen[6]![1]).not.toBe(infos[0]);
    expect(seen[6]![1]).toEqual({ topic: "job.state.run", id });
  });
});
