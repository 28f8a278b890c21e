/** Evaluator instances: own function tables, clocks, and evaluation that never throws. */
import { describe, expect, it } from "vitest";
import {
  ClassAd,
  ERROR,
  Evaluator,
  UNDEFINED,
  builtinEvaluator,
  evalExpr,
  isError,
  isTrue,
  isUndefined,
  matches,
  parseExpr,
  parseOldAd,
  rank,
  unparseValue,
  type Value,
} from "../../src/classad/index.js";

describe("function tables belong to an instance", () => {
  it("a plugin's function is visible only in its own evaluator", () => {
    const mine = new Evaluator();
    const other = new Evaluator();
    mine.addFunction("double", ([v]) => (typeof v === "bigint" ? v * 2n : ERROR));
    const e = parseExpr("Double(21)");
    expect(mine.evaluate(e)).toBe(42n);
    expect(isError(other.evaluate(e))).toBe(true);
    expect(isError(mine.evaluate(e))).toBe(false);
  });

  it("replacing a function invalidates closures compiled before", () => {
    const ev = new Evaluator();
    const e = parseExpr("strcat(\"a\", \"b\")");
    expect(ev.evaluate(e)).toBe("ab");
    ev.addFunction("strcat", () => "replaced");
    expect(ev.evaluate(e)).toBe("replaced");
    expect(new Evaluator().evaluate(e)).toBe("ab");
  });

  it("lazy functions choose which arguments to evaluate", () => {
    const ev = new Evaluator();
    const seen: string[] = [];
    ev.addFunction("note", ([v]) => {
      seen.push(unparseValue(v!));
      return v!;
    });
    ev.addLazyFunction("first", (args, frame) => args[0]!(frame));
    expect(ev.evaluate("first(note(1), note(2))")).toBe(1n);
    expect(seen).toEqual(["1"]);
  });

  it("a throwing plugin function gives error and is logged", () => {
    const logged: string[] = [];
    const ev = new Evaluator({ log: (m) => logged.push(m) });
    ev.addFunction("boom", () => {
      throw new Error("kaboom");
    });
    const ad = parseOldAd("x = boom()\ny = x");
    expect(ev.evaluateAttr(ad, "y")).toBe(ERROR);
    expect(logged).toEqual(["classad: evaluation failed: kaboom"]);
    // the slots are usable again afterwards (no stale cycle marks)
    ad.set("x", 3n);
    expect(ev.evaluateAttr(ad, "y")).toBe(3n);
  });

  it("rejects bad function names and the shared evaluator is sealed", () => {
    expect(() => new Evaluator().addFunction("no-dash", () => 1n)).toThrow(/not an identifier/);
    expect(() => builtinEvaluator().addFunction("x", () => 1n)).toThrow(/read-only/);
    expect(() => builtinEvaluator().addLazyFunction("x", () => 1n)).toThrow(/read-only/);
  });

  it("sealing belongs to the instance: nothing reaches the shared table, and it still evaluates", () => {
    const shared = builtinEvaluator();
    // even the untyped path a JavaScript plugin could take is refused
    expect(() => (shared as unknown as { install(n: string, i: unknown): void }).install("x", { lazy: false, fn: () => 1n })).toThrow(/sealed/);
    expect(shared.get("x")).toBeUndefined();
    expect(evalExpr("x()")).toEqual(ERROR);
    expect(evalExpr('strcat("a", "b")')).toBe("ab");
    const own = new Evaluator({ sealed: true, clock: () => 5 });
    expect(own.evaluate("time()")).toBe(5n);
    expect(() => own.addFunction("y", () => 1n)).toThrow(/sealed/);
  });

  it("a bare evaluator has no builtins", () => {
    expect(isError(new Evaluator({ bare: true }).evaluate("strcat(\"a\")"))).toBe(true);
  });
});

describe("compilation", () => {
  it("compiles a tree once per function-table version and reuses the closure", () => {
    const ev = new Evaluator();
    const e = parseExpr("a + 1");
    const ad = parseOldAd("a = 1");
    expect(ev.evaluate(e, { my: ad })).toBe(2n);
    const first = e.cache?.fn;
    expect(first).toBeTypeOf("function");
    ad.set("a", 41n);
    expect(ev.evaluate(e, { my: ad })).toBe(42n);
    expect(e.cache?.fn).toBe(first);
    ev.addFunction("unrelated", () => 0n);
    ev.evaluate(e, { my: ad });
    expect(e.cache?.fn).not.toBe(first);
  });

  it("a plugin function sees the evaluation frame", () => {
    const ev = new Evaluator();
    ev.addFunction("myOwner", (_args, frame) => {
      const v = frame.my ? ev.evaluateAttr(frame.my, "Owner") : UNDEFINED;
      return typeof v === "string" ? v.toUpperCase() : ERROR;
    });
    expect(ev.evaluate("myOwner()", { my: parseOldAd('Owner = "alice"') })).toBe("ALICE");
    expect(isError(ev.evaluate("myOwner()"))).toBe(true);
  });
});

describe("clock", () => {
  it("time() and CurrentTime come from the evaluator's clock and agree within one evaluation", () => {
    let t = 1000;
    const ev = new Evaluator({ clock: () => t++ });
    expect(ev.evaluate("time() == CurrentTime")).toBe(true);
    expect(ev.evaluate("time()")).toBe(1001n);
  });
});

describe("evaluation never throws", () => {
  const ev = new Evaluator();
  it("circular references give undefined", () => {
    const ad = parseOldAd("a = b + 1\nb = c\nc = a\nself = self");
    expect(ev.evaluateAttr(ad, "a")).toBe(UNDEFINED);
    expect(ev.evaluateAttr(ad, "self")).toBe(UNDEFINED);
    expect(ev.evaluate("eval(\"x\")", { my: parseOldAd('x = eval("x")') })).toBe(UNDEFINED);
  });

  it("cross-ad cycles through TARGET give undefined", () => {
    const a = parseOldAd("J = TARGET.K");
    const b = parseOldAd("K = TARGET.J");
    expect(ev.evaluateAttr(a, "J", b)).toBe(UNDEFINED);
  });

  it("a very long chain of attribute references gives error, not a crash", () => {
    const ad = new ClassAd();
    for (let i = 0; i < 5000; i++) ad.setExpr(`a${i}`, `a${i + 1} + 1`);
    ad.set("a5000", 0n);
    expect(ev.evaluateAttr(ad, "a0")).toBe(ERROR);
    expect(ev.evaluateAttr(ad, "a4800")).toBe(200n);
  });

  it("a deep but legal expression evaluates", () => {
    const text = Array(900).fill("1").join(" + ");
    expect(ev.evaluate(text)).toBe(900n);
  });

  it("a self-referential record does not loop", () => {
    const v: Value = ev.evaluate("[r = [b = r.b]].r.b");
    expect(isUndefined(v) || isError(v)).toBe(true);
  });

  it("a cycle through a record attribute gives undefined (the nested ad is reused within a run)", () => {
    const job = parseOldAd("R = [x = R.x; y = 2]\n");
    expect(ev.evaluate("R.x", { my: job })).toBe(UNDEFINED);
    expect(ev.evaluate("R.y", { my: job })).toBe(2n);
  });

  it("changing a nested ad that evaluation returned does not change the next evaluation", () => {
    const job = parseOldAd("R = [a = 1; b = a + 1]\n");
    const first = ev.evaluateAttr(job, "R") as ClassAd;
    first.set("a", 10n);
    expect(ev.evaluate("R.b", { my: job })).toBe(2n);
    expect(unparseValue(ev.evaluateAttr(job, "R"), false)).toBe("[ a = 1; b = a + 1 ]");
  });

  it("attributes that each use the previous one twice give error instead of running for hours", () => {
    const chain = (n: number) => "[a0 = 1; " + Array.from({ length: n }, (_, i) => `a${i + 1} = a${i} + a${i}; `).join("") + `].a${n}`;
    expect(ev.evaluate(chain(19))).toBe(524288n); // 2^20 dereferences: still fine
    expect(ev.evaluate(chain(60))).toEqual(ERROR);
    const strings = "[s0 = \"xxxxxxxxxx\"; " + Array.from({ length: 60 }, (_, i) => `s${i + 1} = strcat(s${i}, s${i}); `).join("") + "].s60";
    expect(ev.evaluate(`size(${strings})`)).toEqual(ERROR);
    // the budget is per evaluation: the next one starts afresh
    expect(ev.evaluate(chain(3))).toBe(8n);
  });

  it("huge flat lists and deeply nested lists evaluate", () => {
    const big = "{" + Array.from({ length: 50_000 }, (_, i) => i).join(",") + "}";
    expect(ev.evaluate(`size(${big})`)).toBe(50_000n);
    expect(ev.evaluate(`sum(${big})`)).toBe(1_249_975_000n);
    const nested = "{".repeat(150) + "7" + "}".repeat(150);
    expect(ev.evaluate(`size(${nested})`)).toBe(1n);
  });

  it("a missing attribute is undefined", () => {
    expect(ev.evaluateAttr(new ClassAd(), "Nope")).toBe(UNDEFINED);
  });
});

describe("matchmaking", () => {
  it("matches needs both Requirements true; rank promotes booleans", () => {
    const job = parseOldAd('Owner = "alice"\nRequestMemory = 1024\nRequirements = TARGET.Memory >= RequestMemory\nRank = Memory / 1024');
    const slot = parseOldAd('Memory = 4096\nRequirements = TARGET.Owner == "alice"\nRank = Friend + ResearchGroup * 10\nFriend = true\nResearchGroup = true');
    expect(matches(job, slot)).toBe(true);
    expect(rank(job, slot)).toBe(4);
    expect(rank(slot, job)).toBe(11);
    slot.setExpr("Requirements", 'TARGET.Owner == "bob"');
    expect(matches(job, slot)).toBe(false);
    slot.setExpr("Requirements", "TARGET.Undefined_Attr > 1");
    expect(matches(job, slot)).toBe(false);
  });

  it("the verified cross-scope chain: A.J = TARGET.K, B.K = TARGET.L, A.L = 5", () => {
    const a = parseOldAd("J = TARGET.K\nL = 5");
    const b = parseOldAd("K = TARGET.L");
    expect(new Evaluator().evaluateAttr(a, "J", b)).toBe(5n);
  });
});

describe("truthiness has one definition, HTCondor's", () => {
  it("isTrue, &&, ?: and countMatches agree on NaN, zero and non-boolean values", () => {
    const nan = evalExpr('real("NaN")');
    expect(isTrue(nan)).toBe(true);
    expect(evalExpr('real("NaN") && true')).toBe(true);
    expect(evalExpr('real("NaN") ? "yes" : "no"')).toBe("yes");
    expect(evalExpr('countMatches(v, { [ v = real("NaN") ] })')).toBe(1n);
    for (const v of [0n, 0, false, "true", UNDEFINED, ERROR]) expect(isTrue(v)).toBe(false);
  });
});
