/**
 * Job id arguments on the command line (apart from common.ts so that commands without one,
 * `submit` and `jobs`, do not load the id codecs and the mnemonic word list).
 */
import { ErrorCode, JobtapError } from "../errors.js";
import { formatJobId, parseJobId } from "../manager/base/ids.js";

/** A job id argument in any encoding, returned as canonical f58; a USAGE error names it. */
export function jobIdArg(text: string): string {
  try {
    return formatJobId(parseJobId(text));
  } catch (e) {
    throw new JobtapError(ErrorCode.USAGE, (e as Error).message);
  }
}
