/**
 * What a caller may read of a job (docs/cli.md, "Who may do what"), following Flux: the
 * listing view is everyone's; the jobspec, eventlog and job ad are its user's and the
 * instance owner's; the environment in a jobspec is its user's alone.
 */
import { ErrorCode, JobtapError } from "../errors.js";
import { formatJobId, type JobId } from "../manager/base/ids.js";
import type { JobManager } from "../manager/manager.js";
import type { Jobspec } from "../manager/port/records.js";
import type { JobInfo } from "../manager/engine/views.js";
import type { Caller } from "./auth.js";

/**
 * A job's eventlog, jobspec (command line, cwd, output paths) and job ad are for its own user
 * and the instance owner, as in Flux; anyone else sees what `jobs` lists. Returns the job's
 * record, or throws PERMISSION_DENIED (UNKNOWN_JOB for no such job, as for anyone).
 */
export function readable(m: JobManager, id: JobId, c: Caller, operation: string, what: string): JobInfo {
  const info = m.job(id);
  if (c.owner || info.userid === c.userid) return info;
  throw new JobtapError(
    ErrorCode.PERMISSION_DENIED,
    `${operation}: job ${formatJobId(id)} is uid ${info.userid}'s; only its user and the instance owner may read ${what} (\`jobtap jobs\` shows what others may see)`,
    { operation, userid: c.userid },
  );
}

/** A jobspec as someone other than its job's user sees it: the environment withheld. */
export function redactEnvironment(jobspec: Jobspec): Jobspec {
  const system = jobspec.attributes?.system;
  if (system === undefined || !("environment" in system)) return jobspec;
  return {
    ...jobspec,
    attributes: { ...jobspec.attributes, system: { ...system, environment: REDACTED } },
  } as Jobspec;
}

const REDACTED = "(redacted: only the job's own user may see its environment)";

