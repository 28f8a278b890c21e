/**
 * The `-long` ad stream of HTCondor's command-line tools, as condor_transform_ads reads and
 * writes it (HTCondor's CondorClassAdFileIterator with a blank-line delimiter, and
 * CondorClassAdListWriter in long form).
 *
 * Reading: a line of only blanks ends the current ad (several in a row are one separator); a
 * line whose first character other than space or tab is `#` is a comment and skipped; every
 * other line is one `Name = expr` attribute. A line that is not an attribute stops the
 * stream there: HTCondor drops that ad and everything after it.
 *
 * Writing: the attributes in case-insensitive name order, private attributes (claim ids,
 * capabilities, transfer keys, `_condor_priv*`) left out, one `Name = expr` line each with
 * the old-style printer, and a blank line after each ad; an ad with nothing to print is not
 * written at all.
 */
import { ClassAd, insertLine, unparse, type FailedLine } from "../classad/index.js";
import { Parser } from "../classad/parser.js";

/** One ad read from a long-form stream and the line it starts on (1-based). */
export interface LongAd {
  ad: ClassAd;
  firstLine: number;
}

/** The ads before the first bad line, and that line (null when every line was read). */
export interface LongAdsRead {
  ads: LongAd[];
  stoppedAt: FailedLine | null;
}

/** Attribute names HTCondor never prints in a long-form ad (its private-attribute list). */
const PRIVATE = new Set(["capability", "childclaimids", "claimid", "claimidlist", "claimids", "transferkey"]);

/** True for an attribute HTCondor's long-form writer leaves out. */
export function isPrivateAttribute(name: string): boolean {
  const key = name.toLowerCase();
  return PRIVATE.has(key) || key.startsWith("_condor_priv");
}

/** Reads a long-form ad stream (see the module comment). */
export function readLongAds(text: string): LongAdsRead {
  const ads: LongAd[] = [];
  const parser = new Parser("", true);
  let ad: ClassAd | null = null;
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^\s*$/.test(line)) {
      ad = null;
      continue;
    }
    if (/^[ \t]*#/.test(line)) continue;
    if (ad === null) ads.push({ ad: (ad = new ClassAd()), firstLine: i + 1 });
    const failed = insertLine(ad, line, parser);
    if (failed !== null) {
      ads.pop();
      return { ads, stoppedAt: { line: i + 1, text: line, message: failed } };
    }
  }
  return { ads, stoppedAt: null };
}

/** One ad in long form, with the blank line that follows it; "" when nothing is printable. */
export function formatLongAd(ad: ClassAd): string {
  const names = ad.names().filter((n) => !isPrivateAttribute(n));
  if (names.length === 0) return "";
  names.sort((a, b) => {
    const x = a.toLowerCase();
    const y = b.toLowerCase();
    return x < y ? -1 : x > y ? 1 : 0;
  });
  let out = "";
  for (const name of names) out += `${name} = ${unparse(ad.lookup(name)!, true)}\n`;
  return out + "\n";
}
