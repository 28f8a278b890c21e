/**
 * ClassAd text as hooks speak it (htcondor.md §1 item 4, §2.5, §4.8, §11): old-style
 * `Name = expr` lines, several ads separated by a line of dashes — five (`-----`) for the job
 * hooks (REPLY_FETCH, EVICT_CLAIM), six (`------`) for the router hooks.
 *
 * Reading reuses the ClassAd library's per-line insert rule (src/classad/adtext.ts): a bad
 * line is reported with its line number in the whole text and skipped; whether that discards
 * the ad (FETCH_WORK: any bad line discards the reply) is the caller's decision.
 */
import { insertLine, parseNewAd, type FailedLine } from "../classad/adtext.js";
import { ClassAd } from "../classad/classad.js";
import { Parser } from "../classad/parser.js";
import { printOldAd } from "../classad/unparse.js";

/** The separator line between ads on a job hook's stdin (five dashes). */
export const JOB_HOOK_SEPARATOR = "-----";
/** The separator line between ads on a router hook's stdin (six dashes). */
export const ROUTER_HOOK_SEPARATOR = "------";

/** One ad read from hook text, with the lines that could not be inserted. */
export interface HookAd {
  ad: ClassAd;
  /** Lines of this ad that failed, numbered from 1 in the whole text. */
  failed: FailedLine[];
  /** Line number (1-based, in the whole text) of the ad's first line. */
  firstLine: number;
}

/**
 * Reads old-style ads separated by lines that are exactly `separator` (surrounding blanks
 * and a trailing `\r` allowed). A part whose first non-blank character is `[` is read as one
 * new-style ad (the router's route-info ad). Text with no attribute lines at all gives no
 * ads; an empty part between two separators gives an empty ad, so positions are kept.
 */
export function readHookAds(text: string, separator: string = JOB_HOOK_SEPARATOR): HookAd[] {
  const lines = text.split("\n");
  const parts: { start: number; lines: string[] }[] = [{ start: 0, lines: [] }];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === separator) parts.push({ start: i + 1, lines: [] });
    else parts[parts.length - 1]!.lines.push(line);
  }
  const blank = (p: { lines: string[] }) => p.lines.every((l) => l.trim() === "");
  if (parts.length > 1 && blank(parts[parts.length - 1]!)) parts.pop();
  if (parts.length === 1 && blank(parts[0]!)) return [];
  const parser = new Parser("", true);
  return parts.map((p) => readPart(p.start, p.lines, parser));
}

/** Reads one old-style ad from hook text (FETCH_WORK's job ad, a hook's update). */
export function readHookAd(text: string): HookAd {
  return readPart(0, text.split("\n"), new Parser("", true));
}

function readPart(start: number, lines: string[], parser: Parser): HookAd {
  const firstLine = start + 1;
  const firstText = lines.findIndex((l) => l.trim() !== "");
  if (firstText >= 0 && lines[firstText]!.trimStart().startsWith("[")) return readNewPart(start, lines, firstText);
  const ad = new ClassAd();
  const failed: FailedLine[] = [];
  for (let i = 0; i < lines.length; i++) {
    const why = insertLine(ad, lines[i]!, parser);
    if (why !== null) failed.push({ line: start + i + 1, text: lines[i]!, message: why });
  }
  return { ad, failed, firstLine };
}

function readNewPart(start: number, lines: string[], firstText: number): HookAd {
  try {
    return { ad: parseNewAd(lines.join("\n")), failed: [], firstLine: start + 1 };
  } catch (e) {
    const message = (e as Error).message;
    return { ad: new ClassAd(), failed: [{ line: start + firstText + 1, text: lines[firstText]!, message }], firstLine: start + 1 };
  }
}

/**
 * Writes ads as hook stdin: each ad as old-style lines (sPrintAd), a `separator` line
 * between them. A string part is written as given (ended with a newline if it lacks one):
 * the router's one-line new-style route-info ad, or an ad with an extra `ClaimId` line.
 */
export function writeHookAds(parts: readonly (ClassAd | string)[], separator: string = JOB_HOOK_SEPARATOR): string {
  let s = "";
  parts.forEach((part, i) => {
    if (i > 0) s += `${separator}\n`;
    const text = typeof part === "string" ? part : printOldAd(part);
    s += text === "" || text.endsWith("\n") ? text : `${text}\n`;
  });
  return s;
}

export type { FailedLine };
