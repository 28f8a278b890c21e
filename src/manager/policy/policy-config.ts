/**
 * What the `[policy]` readers share (slot-policy.ts for the slots, system-periodic.ts for
 * the site's periodic expressions): the pasted HTCondor config file, expression text parsed
 * with a config error naming where it came from, and that error's shape.
 */
import type { Expr } from "../../classad/expr.js";
import { parseExpr } from "../../classad/parser.js";
import { readCondorConfigFile } from "../../condor/config-reader.js";
import type { CondorConfig } from "../../condor/config.js";
import { ErrorCode, JobtapError, isJobtapError } from "../../errors.js";

/** Reads `[policy] condor_config`; its errors say they came from that key. */
export function readPolicyCondor(path: string): CondorConfig {
  try {
    return readCondorConfigFile(path, { env: {} });
  } catch (e) {
    if (isJobtapError(e)) throw new JobtapError(ErrorCode.CONFIG, `[policy].condor_config: ${e.message}`, e.details);
    throw e;
  }
}

/** Parses old-syntax ClassAd text; a syntax error names `where` and the column. */
export function parsePolicyExpr(text: string, where: string): Expr {
  try {
    return parseExpr(text, true);
  } catch (e) {
    if (!isJobtapError(e)) throw e;
    const d = e.details as { column?: number } | undefined;
    const at = d?.column === undefined ? "" : ` at column ${d.column}`;
    throw policyConfigError(where, `ClassAd syntax error${at}: ${e.message.replace(/^ClassAd syntax error( at \d+:\d+)?: /, "")}`);
  }
}

/** A config error at `where` (a TOML path or FILE:LINE: KNOB). */
export function policyConfigError(where: string, why: string): JobtapError {
  return new JobtapError(ErrorCode.CONFIG, `${where}: ${why}`, { path: where });
}
