/**
 * Property test over random token soup (fixed seed): parsing either succeeds or throws
 * CLASSAD_SYNTAX, evaluation never throws, and printing round-trips in both syntaxes.
 */
import { describe, expect, it } from "vitest";
import { Evaluator, parseExpr, parseOldAd, unparse } from "../../src/classad/index.js";
import { isJobtapError } from "../../src/errors.js";

const TOKENS = [
  "1", "-2", "3.5", '"s"', "x", "y", "MY", "TARGET", "parent", ".", "(", ")", "[", "]", "{", "}", ",", ";", "=",
  "+", "-", "*", "/", "%", "&&", "||", "!", "?", ":", "?:", "==", "=?=", "is", "isnt", "<", "<<", ">>>", "~", "^",
  "&", "|", "strcat", "ifThenElse", "eval", "size", "split", "regexp", '"("', "undefined", "error", "true",
  "[a = x; x = a]", "{1,2}", "a", "b", "'q'", "1e400", "9223372036854775807", "unparse", "countMatches",
  "evalInEachContext", "join", "substr", "interval", "pow", "quantize", "absTime", "relTime", "splitTime",
];

describe("random expressions", () => {
  it("parse or fail cleanly, evaluate without throwing, and print stably", () => {
    const ev = new Evaluator({ clock: () => 1700000000, random: () => 0.5 });
    const ad = parseOldAd('x = y + 1\ny = x\na = {1, [b = a]}\nb = "str"\nparent = 3');
    let seed = 12345;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    let parsed = 0;
    for (let i = 0; i < 20_000; i++) {
      let text = "";
      const n = 1 + Math.floor(rnd() * 12);
      for (let j = 0; j < n; j++) text += TOKENS[Math.floor(rnd() * TOKENS.length)]! + (rnd() < 0.5 ? " " : "");
      let e;
      try {
        e = parseExpr(text);
      } catch (err) {
        expect(isJobtapError(err, "CLASSAD_SYNTAX"), text).toBe(true);
        continue;
      }
      parsed++;
      expect(() => ev.evaluate(e, { my: ad, target: ad }), text).not.toThrow();
      const once = unparse(e);
      expect(unparse(parseExpr(once)), text).toBe(once);
      const old = unparse(e, true);
      expect(unparse(parseExpr(old, true), true), text).toBe(old);
    }
    expect(parsed).toBeGreaterThan(1000);
  });
});
