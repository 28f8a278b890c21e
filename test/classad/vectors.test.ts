/**
 * HTCondor's own values: every case of vectors/libclassad-vectors.jsonl (expressions whose
 * values HTCondor's C++ ClassAd library computed, old semantics; see vectors/README.md) must
 * evaluate here to the same value and type. Values are compared as the README says:
 * whitespace-insensitively outside string literals and case-insensitively for the keywords
 * true/false/undefined/error. Cases deliberately not followed are listed in SKIPPED, each
 * with its reason also written in docs/classad.md.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { Evaluator, parseExpr, parseOldAd, typeOf, unparseValue, type ClassAd } from "../../src/classad/index.js";

interface Vector {
  ad: string;
  target: string | null;
  expr: string;
  expect: string;
  type: string;
}

/** Line numbers (1-based) of cases we do not follow; the reasons are in docs/classad.md. */
const SKIPPED = new Map<number, string>([]);

const file = new URL("./vectors/libclassad-vectors.jsonl", import.meta.url);
const vectors: Vector[] = readFileSync(file, "utf8")
  .split("\n")
  .filter((l) => l.trim() !== "")
  .map((l) => JSON.parse(l) as Vector);

/** Whitespace outside string literals dropped, the four keywords lower-cased. */
export function normalize(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (/\s/.test(c)) i++;
    else {
      const m = /^[A-Za-z_][A-Za-z_0-9]*/.exec(text.slice(i, i + 64));
      if (m) {
        out += /^(true|false|undefined|error)$/i.test(m[0]) ? m[0].toLowerCase() : m[0];
        i += m[0].length;
      } else {
        out += c;
        i++;
      }
    }
  }
  return out;
}

const ads = new Map<string, ClassAd>();
function ad(text: string): ClassAd {
  let a = ads.get(text);
  if (!a) ads.set(text, (a = parseOldAd(text)));
  return a;
}

/** The value and type jobtap computes for one vector, printed as the vectors are. */
function run(ev: Evaluator, v: Vector): { value: string; type: string } {
  const value = ev.evaluate(parseExpr(v.expr), { my: ad(v.ad), target: v.target === null ? null : ad(v.target) });
  return { value: unparseValue(value, true), type: typeOf(value) };
}

describe("libclassad vectors", () => {
  const ev = new Evaluator({ clock: () => 1700000000, random: () => 0.25 });

  it("has every case of the shared file", () => {
    expect(vectors.length).toBe(4309);
    expect(SKIPPED.size).toBeLessThanOrEqual(43);
  });

  it("agrees with HTCondor's libclassad on every case not listed as skipped", () => {
    const failures: string[] = [];
    vectors.forEach((v, i) => {
      if (SKIPPED.has(i + 1)) return;
      let got: { value: string; type: string };
      try {
        got = run(ev, v);
      } catch (e) {
        failures.push(`line ${i + 1}: ${v.expr}\n  threw ${(e as Error).message}`);
        return;
      }
      if (got.type !== v.type || normalize(got.value) !== normalize(v.expect)) {
        failures.push(`line ${i + 1}: ${v.expr}\n  expected ${v.type} ${v.expect}\n  got      ${got.type} ${got.value}`);
      }
    });
    if (process.env.VECTORS_FAILURES) writeFileSync(process.env.VECTORS_FAILURES, failures.join("\n") + "\n");
    expect(failures.length, failures.slice(0, 40).join("\n")).toBe(0);
  });
});
