/**
 * Runs the ClassAd corpus: every `*.cad` file under test/classad/corpus. Format (ours):
 *   # comment                  blank lines ignored
 *   @my [ new-style ad ]       MY ad for the following cases (@target likewise)
 *   @clear                     drop MY and TARGET
 *   EXPR => VALUE              VALUE is the result printed by the old-style printer
 *   EXPR =>> VALUE             ... printed by the new-style printer
 *   EXPR =>! SYNTAX            EXPR must fail to parse (CLASSAD_SYNTAX)
 *   ?match => true|false       matches(MY, TARGET)
 *   ?rank => REAL              rank(MY, TARGET), printed old-style
 * The clock is fixed at 1700000000 and the zone is UTC.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ClassAd, Evaluator, matches, parseExpr, parseNewAd, rank, unparseValue, formatReal } from "../../src/classad/index.js";
import { isJobtapError } from "../../src/errors.js";

process.env.TZ = "UTC";

interface Case {
  line: number;
  text: string;
  run: () => void;
}

const dir = fileURLToPath(new URL("./corpus", import.meta.url));
const ev = new Evaluator({ clock: () => 1700000000, random: () => 0.25 });

function loadCases(file: string): Case[] {
  const cases: Case[] = [];
  let my: ClassAd | null = null;
  let target: ClassAd | null = null;
  readFileSync(join(dir, file), "utf8")
    .split("\n")
    .forEach((raw, i) => {
      const text = raw.trim();
      if (text === "" || text.startsWith("#")) return;
      if (text.startsWith("@my ")) my = parseNewAd(text.slice(4));
      else if (text.startsWith("@target ")) target = parseNewAd(text.slice(8));
      else if (text === "@clear") my = target = null;
      else cases.push({ line: i + 1, text, run: caseRunner(text, my, target) });
    });
  return cases;
}

function caseRunner(text: string, my: ClassAd | null, target: ClassAd | null): () => void {
  const m = /^(.*?)\s+=>(>|!)?\s*(.*)$/.exec(text);
  if (!m) throw new Error(`corpus line without "=>": ${text}`);
  const [, expr, mode, expected] = m as unknown as [string, string, string | undefined, string];
  if (expr === "?match") return () => expect(String(matches(my!, target!, ev))).toBe(expected);
  if (expr === "?rank") return () => expect(formatReal(rank(my!, target!, ev), true)).toBe(expected);
  if (mode === "!") {
    return () => {
      let err: unknown;
      try {
        parseExpr(expr);
      } catch (e) {
        err = e;
      }
      expect(isJobtapError(err, "CLASSAD_SYNTAX"), `expected a syntax error for ${expr}`).toBe(true);
    };
  }
  return () => {
    const v = ev.evaluate(parseExpr(expr), { my, target });
    expect(unparseValue(v, mode !== ">")).toBe(expected);
  };
}

const files = readdirSync(dir).filter((f) => f.endsWith(".cad")).sort();
let total = 0;
for (const file of files) {
  const cases = loadCases(file);
  total += cases.length;
  describe(file, () => {
    for (const c of cases) it(`${file}:${c.line}: ${c.text}`, c.run);
  });
}

describe("corpus size", () => {
  it("has at least 500 cases", () => expect(total).toBeGreaterThanOrEqual(500));
});
