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
export {
  ClassAd,
  Evaluator,
  parseExpr,
  parseOldAd,
  readOldAd,
  parseNewAd,
  parseAd,
  unparse,
  unparseValue,
  printOldAd,
  printNewAd,
  adToJSON,
  adFromJSON,
  evalAttr,
  evalExpr,
  matches,
  requirementsHold,
  rank,
  UNDEFINED,
  ERROR,
  ListValue,
  AbsTime,
  RelTime,
  typeOf,
  isUndefined,
  isError,
  isTrue,
  intValue,
  listValue,
  toJS,
} from "./classad/index.js";
export type { Value as ClassAdValue, ValueType as ClassAdValueType, Expr as ClassAdExpr, ClassAdFunction, LazyClassAdFunction, EvaluatorOptions } from "./classad/index.js";

// --- HTCondor config and transforms ---
export {
  CondorConfig,
  parseCondorConfig,
  readCondorConfigFile,
  parseTransform,
  TransformRun,
  readRouterConfig,
  routerConfigFromToml,
  convertOldRouteText,
  ROUTER_DEFAULTS,
  cronTableFromConfig,
} from "./condor/index.js";
export type {
  ConfigSource,
  ConfigReadOptions,
  Transform,
  TransformStep,
  TransformOutcome,
  TransformRunOptions,
  Route,
  RouteSettings,
  RouterConfig,
  RouterSettings,
  NamedTransform,
  CronTable,
  CronJobConfig,
} from "./condor/index.js";
