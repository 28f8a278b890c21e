/**
 * jobtap's public library API. Names are listed explicitly, one block per area.
 */
export { ErrorCode, JobtapError, isJobtapError } from "./errors.js";
export type { ErrorCode as ErrorCodeType, JobtapErrorData } from "./errors.js";

// --- job manager ---
export {
  STATES,
  STATE_BIT,
  PENDING,
  RUNNING,
  ACTIVE,
  RESULTS,
  URGENCY_DEFAULT,
  URGENCY_HOLD,
  URGENCY_EXPEDITE,
  PRIORITY_MAX,
} from "./manager/states.js";
export type { State, JobResult } from "./manager/states.js";
export type { JobId } from "./manager/ids.js";
export type { EventEntry, Jobspec, JobArgs } from "./manager/port.js";

// --- plugin host ---

// --- ClassAd language ---

// --- HTCondor config and transforms ---
