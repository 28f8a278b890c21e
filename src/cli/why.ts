/**
 * `jobtap job why ID... [--json]` (and `jobtap why`): why each job is not running, or how it
 * ended — every layer's reasons (docs/why.md). One block per job; `--json` prints the
 * protocol's `Explanation` objects as one array. A job that cannot be read (unknown, or
 * another user's) is reported on stderr and makes the status 1; the others still print.
 */
import { optFlag, parseArgs, usage, type CommandSpec } from "./args.js";
import { withDaemon } from "./common.js";
import { jobIdArg } from "./jobid.js";
import type { CliIO, Subcommand } from "./io.js";
import type { Explanation } from "../server/protocol.js";

/** The option table of `jobtap job why` / `jobtap why` (parser and --help). */
export const SPEC: CommandSpec = {
  usage: ["why ID... [--json]", "job why ID... [--json]"],
  summary: "says why each job is not running (or how it ended), from every layer",
  options: [{ name: "json", help: "print the reasons as one JSON array (docs/why.md)" }],
};

/** Prints each job's reasons. */
export const why: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, SPEC);
  if (p.positionals.length === 0) throw usage(`usage: jobtap ${SPEC.usage[0]}`);
  const ids = p.positionals.map(jobIdArg);
  const json = optFlag(p, "json");
  return withDaemon(io, async (client) => {
    let status = 0;
    const answers: Explanation[] = [];
    for (const id of ids) {
      try {
        const ex = await client.call("why", { id });
        if (json) answers.push(ex);
        else io.stdout(formatExplanation(ex, answers.length++ > 0));
      } catch (e) {
        io.stderr(`jobtap why: ${(e as Error).message}\n`);
        status = 1;
      }
    }
    if (json) io.stdout(JSON.stringify(answers, null, 2) + "\n");
    return status;
  });
};

/** One job's block: `ID STATE`, then one indented line per reason, `source: text`. */
export function formatExplanation(ex: Explanation, blankBefore = false): string {
  const lines = [`${ex.id} ${ex.state}`];
  if (ex.reasons.length === 0) lines.push("  (nothing holds it)");
  for (const r of ex.reasons) lines.push(`  ${r.layer}/${r.source}: ${r.text}`);
  return (blankBefore ? "\n" : "") + lines.join("\n") + "\n";
}
