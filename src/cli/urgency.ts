/**
 * `jobtap urgency ID N|hold|expedite|default`: sets a job's urgency, as `flux job urgency`
 * does; prints the old value with `-v`.
 */
import { URGENCY_DEFAULT, URGENCY_EXPEDITE, URGENCY_HOLD, URGENCY_MAX, URGENCY_MIN } from "../manager/states.js";
import { optFlag, parseArgs, usage } from "./args.js";
import { jobIdArg, withDaemon } from "./common.js";
import type { Subcommand } from "./io.js";

const NAMED: Record<string, number> = {
  hold: URGENCY_HOLD,
  expedite: URGENCY_EXPEDITE,
  default: URGENCY_DEFAULT,
};

/** Parses an urgency argument: 0..31 or one of the names. */
export function parseUrgency(text: string, what = "urgency"): number {
  const named = NAMED[text.toLowerCase()];
  if (named !== undefined) return named;
  if (!/^\d+$/.test(text) || Number(text) < URGENCY_MIN || Number(text) > URGENCY_MAX) {
    throw usage(`${what} "${text}": expected ${URGENCY_MIN}..${URGENCY_MAX}, hold, expedite or default`);
  }
  return Number(text);
}

/** Changes one job's urgency. */
export const urgency: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, [{ name: "verbose", short: "v" }]);
  if (p.positionals.length !== 2) throw usage("usage: jobtap urgency ID N|hold|expedite|default");
  const id = jobIdArg(p.positionals[0] as string);
  const value = parseUrgency(p.positionals[1] as string);
  return withDaemon(io, async (client) => {
    const { old_urgency } = await client.call("urgency", { id, urgency: value });
    if (optFlag(p, "verbose")) io.stdout(`${id}: urgency ${old_urgency} -> ${value}\n`);
    return 0;
  });
};
